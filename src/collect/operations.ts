/**
 * Collector `operations`: Catena's operations log (GET /tv-management/api/v1/operations) turned
 * into operation counters and billing totals, one instance per configured `catena` entry.
 *
 * Each poll reads the operations created since the last one seen (inclusive bound, so operations
 * of that same millisecond that appeared later are not missed; the ones already counted are
 * skipped by id), applies the new ones in time order to a draft of the ledger, and commits the
 * draft only when everything, billing look-ups included, succeeded. Then the ledger is saved to
 * the state file and rendered. The counters are the exporter's own accumulation: a failed poll
 * changes nothing and the next one resumes from the last good position.
 *
 * Billing: a cancellation (deletePackageSubscriber) is matched to the latest creation
 * (createPackageSubscriber) of the same portal, subscriber and package at or before it, from
 * the open subscriptions the ledger keeps; a subscription created before the exporter's first
 * poll (the horizon) is looked up in the log: type + subscriber filter + created_before = horizon.
 */
import type { Logger } from 'pino';
import type { CatenaConfig, CatenaPrice } from '../config/types.js';
import type { ApiStats } from '../flussonic/api.js';
import { OperationsClient, type RejectedRecord } from '../catena/client.js';
import { emptyLedger, LedgerDraft, OTHER_OPERATION, type CreationLookup, type Ledger } from '../catena/ledger.js';
import { compareOperations, CREATE_SUBSCRIPTION, KNOWN_OPERATION_TYPES, type Operation } from '../catena/records.js';
import { ledgerToJson, loadStateFile, saveStateFile } from '../catena/state-file.js';
import { FutureRecords } from '../catena/future.js';
import { formatIsoMs } from '../catena/time.js';
import { OPERATIONS_FAMILIES } from './operations-families.js';
import type { SeriesWriter } from '../render/series.js';
import type { CatenaCollectContext, CatenaCollector } from './types.js';
import type { PollTiming } from '../poll/schedule.js';

const {
  operations: OPERATIONS,
  created: CREATED,
  cancelled: CANCELLED,
  billedSeconds: BILLED_SECONDS,
  billedAmount: BILLED_AMOUNT,
  unmatched: UNMATCHED,
  lastOperation: LAST_OPERATION,
  packageInfo: PACKAGE_INFO,
  rejected: REJECTED,
} = OPERATIONS_FAMILIES;

/** Unreadable records are reported once per operationId; this many ids are remembered for that. */
const REPORTED_REJECTS_KEPT = 1000;

export interface OperationsCollectorDeps {
  readonly logger: Logger;
  readonly stats: ApiStats;
  /** Wall clock in Unix ms: where `start` counts from at the first start. */
  readonly now: () => number;
  readonly userAgent?: string;
  /** Pause before the one retry of a failed GET (tests shorten it). */
  readonly retryBackoffMs?: number;
  /**
   * Shared by the collectors the exporter creates over its life: one replaced on a config reload
   * leaves its ledger here at close() and its successor takes it, so a reload neither resets the
   * counters nor loses the operations in between, with or without a state file.
   */
  readonly handoff?: LedgerHandoff;
}

/** Ledgers of closed collectors by catena name, for their successors in the same process. */
export class LedgerHandoff {
  private readonly ledgers = new Map<string, Ledger>();

  put(catena: string, ledger: Ledger): void {
    this.ledgers.set(catena, ledger);
  }

  take(catena: string): Ledger | undefined {
    const ledger = this.ledgers.get(catena);
    this.ledgers.delete(catena);
    return ledger;
  }
}

export class OperationsCollector implements CatenaCollector {
  private readonly client: OperationsClient;
  /** Restored or created at the first poll. */
  private ledger: Ledger | undefined;
  /** False when a bad state file could not be set aside: then it is never overwritten. */
  private stateWritable = true;
  /** Whether the state file holds the ledger as it is now (nothing to write after an empty poll). */
  private stateSaved = false;
  private readonly reportedRejects = new Set<string>();
  private readonly future: FutureRecords;

  constructor(
    private readonly config: CatenaConfig,
    private readonly deps: OperationsCollectorDeps,
  ) {
    this.future = new FutureRecords(config.maxClockSkewMs);
    this.client = new OperationsClient(config, { stats: deps.stats, userAgent: deps.userAgent, retryBackoffMs: deps.retryBackoffMs });
  }

  async collect(ctx: CatenaCollectContext): Promise<void> {
    const ledger = (this.ledger ??= await this.restore());
    const draft = new LedgerDraft(ledger, this.config.prices);

    // Only the new operations are kept: a service that ignores the bound costs time, not memory.
    const fresh: Operation[] = [];
    let read = 0;
    const nowMs = this.deps.now();
    for await (const page of this.client.walk({ createdFromMs: ledger.position.ms }, ctx.signal)) {
      read += page.operations.length;
      for (const op of page.operations) if (draft.isNew(op) && !this.future.reject(op, nowMs, ctx.log)) fresh.push(op);
      this.reportRejected(page.rejected, ctx.log);
    }
    // The pages' order is not documented: billing needs time order, so sort.
    fresh.sort(compareOperations);
    const lookup = this.creationLookup(ledger.horizonMs, ctx);
    for (const op of fresh) await draft.apply(op, lookup);
    draft.advance(fresh);
    draft.commit();
    if (fresh.length > 0) this.stateSaved = false;

    for (const u of draft.unmatched) ctx.log.warn({ operationId: u.operationId, portal: u.portalId }, `cancellation not billed: ${u.reason}`);
    for (const i of draft.incomplete) ctx.log.warn({ operationId: i.operationId }, i.reason);
    ctx.log.debug({ read, counted: fresh.length, position: formatIsoMs(ledger.position.ms), open: ledger.open.size }, 'operations log read');

    await this.persist(ledger, ctx.log);
    renderLedger(ledger, this.config.prices, ctx.out);
    // From 0 once the log has anything (so that increase() sees the first rejection).
    if (ledger.portals.size > 0 || this.future.count > 0) ctx.out.add(REJECTED, ['future'], this.future.count);
  }

  retime(timing: PollTiming): void {
    this.client.retime(timing);
  }

  async close(): Promise<void> {
    if (this.ledger) this.deps.handoff?.put(this.config.name, this.ledger);
    await this.client.close();
  }

  /** The predecessor's ledger, else the one in the state file, else a fresh one starting where `start` says. */
  private async restore(): Promise<Ledger> {
    const log = this.deps.logger;
    const handed = this.deps.handoff?.take(this.config.name);
    if (handed) {
      log.info({ position: formatIsoMs(handed.position.ms) }, 'catena ledger taken over from before the configuration reload');
      return handed;
    }
    const now = this.deps.now();
    const fresh = () => emptyLedger(this.config.start.kind === 'now' ? now : now - this.config.start.ms);
    const path = this.config.stateFile;
    if (!path) return fresh();
    const loaded = await loadStateFile(path, this.config.name, now, this.config.maxClockSkewMs);
    if (loaded.kind === 'loaded') {
      const l = loaded.ledger;
      log.info({ path, position: formatIsoMs(l.position.ms), portals: l.portals.size, openSubscriptions: l.open.size }, 'catena state restored');
      return l;
    }
    const ledger = fresh();
    if (loaded.kind === 'absent') {
      log.info({ path, from: formatIsoMs(ledger.horizonMs) }, 'no catena state file yet: starting from the configured start');
    } else if (loaded.movedTo) {
      log.warn({ path, reason: loaded.reason, movedTo: loaded.movedTo, from: formatIsoMs(ledger.horizonMs) }, 'catena state file set aside: starting afresh');
    } else {
      this.stateWritable = false;
      log.error({ path, reason: loaded.reason, renameError: loaded.moveError }, 'catena state file is bad and could not be set aside: it is left alone and no state is written in this run');
    }
    return ledger;
  }

  private async persist(ledger: Ledger, log: Logger): Promise<void> {
    const path = this.config.stateFile;
    if (!path || !this.stateWritable || this.stateSaved) return;
    try {
      await saveStateFile(path, ledgerToJson(ledger, this.config.name, this.deps.now()));
      this.stateSaved = true;
    } catch (err) {
      // The totals in memory stay right; only a restart before the next good save would lose them.
      const e = err as NodeJS.ErrnoException;
      log.error({ path, reason: e.code ?? e.message }, 'catena state file could not be written');
    }
  }

  /** Look-ups of creations before the horizon, one request walk per subscriber and poll. */
  private creationLookup(horizonMs: number, ctx: CatenaCollectContext): CreationLookup {
    const bySubscriber = new Map<string, Operation[]>();
    return async (portalId, subscriberId, packageId) => {
      let creations = bySubscriber.get(subscriberId);
      if (!creations) {
        const found = await this.client.readAll({ type: CREATE_SUBSCRIPTION, subscriberId, createdBeforeMs: horizonMs }, ctx.signal);
        this.reportRejected(found.rejected, ctx.log);
        creations = found.operations;
        bySubscriber.set(subscriberId, creations);
      }
      let latest: Operation | undefined;
      for (const c of creations) {
        if (c.portalId !== portalId || c.packageId !== packageId) continue;
        if (!latest || compareOperations(c, latest) > 0) latest = c;
      }
      return latest && { operationId: latest.operationId, createdAtMs: latest.createdAtMs };
    };
  }

  private reportRejected(rejected: readonly RejectedRecord[], log: Logger): void {
    for (const r of rejected) {
      if (r.operationId !== undefined) {
        if (this.reportedRejects.has(r.operationId)) continue;
        if (this.reportedRejects.size >= REPORTED_REJECTS_KEPT) this.reportedRejects.clear();
        this.reportedRejects.add(r.operationId);
      }
      log.warn({ operationId: r.operationId }, `operation record skipped: ${r.reason}`);
    }
  }
}

/** All families of the ledger (flussonic_catena_up is the poller's). `catena` is the writer's constant label. */
export function renderLedger(ledger: Ledger, prices: ReadonlyMap<string, CatenaPrice>, out: SeriesWriter): void {
  for (const [portal, p] of ledger.portals) {
    for (const type of KNOWN_OPERATION_TYPES) out.add(OPERATIONS, [portal, type], p.operations.get(type) ?? 0);
    for (const [label, n] of p.operations) {
      if (label !== OTHER_OPERATION && !(KNOWN_OPERATION_TYPES as readonly string[]).includes(label)) out.add(OPERATIONS, [portal, label], n);
    }
    const other = p.operations.get(OTHER_OPERATION);
    if (other !== undefined) out.add(OPERATIONS, [portal, OTHER_OPERATION], other);

    out.add(UNMATCHED, [portal], p.unmatched);
    if (p.lastOperationMs !== undefined) out.add(LAST_OPERATION, [portal], p.lastOperationMs / 1000);

    for (const [pkg, k] of p.packages) {
      out.add(CREATED, [portal, pkg], k.created);
      out.add(CANCELLED, [portal, pkg], k.cancelled);
      out.add(BILLED_SECONDS, [portal, pkg], k.billedSeconds);
      const price = prices.get(pkg);
      const amounts = new Map(k.billedAmount);
      if (price && !amounts.has(price.currency)) amounts.set(price.currency, 0);
      for (const [currency, amount] of amounts) out.add(BILLED_AMOUNT, [portal, pkg, currency], amount);
      if (k.name !== undefined) out.add(PACKAGE_INFO, [portal, pkg, k.name], 1);
    }
  }
}
