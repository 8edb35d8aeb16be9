import { once } from 'node:events';
import { createGzip, gzipSync } from 'node:zlib';
import { CATALOGUE, type FamilyDef } from './catalogue.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The upstream-derived samples of one target (server or catena) from its last good poll: per
 * family, its sample lines as blocks of UTF-8, each line ending in a newline (SeriesWriter.render()).
 */
export type TargetChunks = ReadonlyMap<string, readonly Buffer[]>;

/**
 * The exposition of all upstream series, put in order once per snapshot swap and served from
 * memory. Each target's poll hands over its rendered family blocks; the parts are listed family by
 * family in catalogue order so that one family's series from all targets stay together under one
 * HELP/TYPE, and gzipped once. Self-metrics are appended per scrape by the HTTP layer (they are
 * small); a gzip response is this cached gzip followed by a second gzip member for them.
 */
export class ExpositionCache {
  private readonly targets = new Map<string, TargetChunks>();
  /**
   * The exposition as UTF-8, in parts: HELP/TYPE headers and the targets' sample blocks in
   * catalogue order, referenced as they are, never joined. A scrape writes them one after the
   * other; only tests ask for the text (decoded on demand). An assembled copy doubled the memory
   * of a large exposition (35 MB more at 10,000 streams) and was garbage again after every swap.
   */
  private parts: readonly Buffer[] = [];
  private bytes = 0;
  private decoded: { readonly version: number; readonly text: string } | undefined;
  private gzipped: Buffer = gzipSync('');
  private gzippedVersion = 0;
  /** The gzip of the newest parts being made on the libuv thread pool, if any. */
  private gzipRunning: Promise<void> | undefined;
  private version = 0;
  /** HELP/TYPE lines per family, encoded once. */
  private readonly headers = new Map<string, Buffer>();

  constructor(private readonly families: readonly FamilyDef[] = CATALOGUE) {}

  /** Swaps in the chunks of one target (replacing what it had) and rebuilds the exposition. */
  swap(target: string, chunks: TargetChunks): void {
    this.targets.set(target, chunks);
    this.rebuild();
  }

  /** Withdraws every upstream series of a target (its poll failed, or it left the config). */
  withdraw(target: string): void {
    if (this.targets.delete(target)) this.rebuild();
  }

  /** Keeps only the named targets (after a config reload). */
  retain(targets: ReadonlySet<string>): void {
    let changed = false;
    for (const name of [...this.targets.keys()]) {
      if (!targets.has(name)) {
        this.targets.delete(name);
        changed = true;
      }
    }
    if (changed) this.rebuild();
  }

  /**
   * The exposition now. `gzip` is made synchronously here when the background gzip of this
   * version has not finished; the HTTP layer uses snapshot() instead, which never blocks.
   */
  get current(): { readonly text: string; readonly gzip: Buffer; readonly version: number } {
    if (this.gzippedVersion !== this.version) this.gzipNow();
    return { text: this.text, gzip: this.gzipped, version: this.version };
  }

  private get text(): string {
    if (this.decoded?.version !== this.version) this.decoded = { version: this.version, text: joinedText(this.parts, this.bytes) };
    return this.decoded.text;
  }

  private gzipNow(): void {
    this.gzipped = gzipSync(Buffer.concat(this.parts as Buffer[], this.bytes), GZIP_OPTIONS);
    this.gzippedVersion = this.version;
  }

  /**
   * The exposition now, as bytes and gzip, for a scrape. Each swap starts the gzip of the new body
   * on the thread pool at once, so it is normally ready when the next scrape comes; a scrape that
   * arrives earlier awaits it (the event loop stays free) instead of compressing again. When swaps
   * keep arriving, gzips coalesce: at most one runs, then one for the newest version.
   */
  async snapshot(): Promise<ExpositionSnapshot> {
    for (let waits = 0; this.gzippedVersion !== this.version && waits < 3; waits++) {
      this.startGzip();
      await this.gzipRunning;
    }
    // Swaps kept outrunning the background gzip for three rounds (rare): compress here.
    if (this.gzippedVersion !== this.version) this.gzipNow();
    const { parts, bytes, gzipped: gzip, version } = this;
    const decode = () => (version === this.version ? this.text : joinedText(parts, bytes));
    return {
      get text() {
        return decode();
      },
      parts,
      bytes,
      gzip,
      version,
    };
  }

  /**
   * One target's exposition (for /probe): HELP/TYPE and its sample blocks, family by family in
   * catalogue order, referenced as they are; undefined when the target has no series (not polled
   * yet, or its last poll failed).
   */
  targetParts(target: string): { readonly parts: readonly Buffer[]; readonly bytes: number } | undefined {
    const chunks = this.targets.get(target);
    if (!chunks) return undefined;
    const parts: Buffer[] = [];
    let bytes = 0;
    for (const def of this.families) {
      const blocks = chunks.get(def.name);
      if (!blocks || blocks.length === 0) continue;
      for (const part of [this.headerOf(def), ...blocks]) {
        parts.push(part);
        bytes += part.length;
      }
    }
    return { parts, bytes };
  }

  /** Names of the targets whose chunks are in the exposition. */
  get targetNames(): readonly string[] {
    return [...this.targets.keys()];
  }

  private startGzip(): void {
    if (this.gzipRunning || this.gzippedVersion === this.version) return;
    const version = this.version;
    this.gzipRunning = gzipParts(this.parts).then(
      (result) => {
        // A newer synchronous gzip may have landed meanwhile; never go backwards.
        if (version > this.gzippedVersion) {
          this.gzipped = result;
          this.gzippedVersion = version;
        }
      },
      () => undefined, // zlib failing on a buffer in memory: snapshot() compresses synchronously
    ).finally(() => {
      this.gzipRunning = undefined;
      if (this.gzippedVersion !== this.version) this.startGzip();
    });
  }

  private rebuild(): void {
    const parts: Buffer[] = [];
    let bytes = 0;
    for (const def of this.families) {
      let header = false;
      for (const chunks of this.targets.values()) {
        const blocks = chunks.get(def.name);
        if (!blocks || blocks.length === 0) continue;
        if (!header) {
          const h = this.headerOf(def);
          parts.push(h);
          bytes += h.length;
          header = true;
        }
        for (const block of blocks) {
          parts.push(block);
          bytes += block.length;
        }
      }
    }
    this.parts = parts;
    this.bytes = bytes;
    this.decoded = undefined;
    this.version++;
    this.startGzip();
  }

  private headerOf(def: FamilyDef): Buffer {
    let header = this.headers.get(def.name);
    if (!header) {
      header = Buffer.from(familyHeader(def), 'utf8');
      this.headers.set(def.name, header);
    }
    return header;
  }
}

export interface ExpositionSnapshot {
  readonly text: string;
  /** The exposition as UTF-8, to be sent part after part; `bytes` long in all. */
  readonly parts: readonly Buffer[];
  readonly bytes: number;
  readonly gzip: Buffer;
  readonly version: number;
}

function joinedText(parts: readonly Buffer[], bytes: number): string {
  return Buffer.concat(parts as Buffer[], bytes).toString('utf8');
}

/**
 * One gzip of all parts on the thread pool, without joining them. zlib takes one thread-pool round
 * trip per write (and per output chunk), each waiting for the event loop, which a poll may keep
 * busy: the thousands of small sample blocks of a large exposition are fed in batches of about
 * 1 MiB instead (copied a batch at a time), so a 30 MB exposition costs some 30 round trips, not
 * 1,500.
 */
async function gzipParts(parts: readonly Buffer[]): Promise<Buffer> {
  const zip = createGzip({ ...GZIP_OPTIONS, chunkSize: GZIP_CHUNK_BYTES });
  const out: Buffer[] = [];
  zip.on('data', (chunk: Buffer) => out.push(chunk));
  const finished = once(zip, 'end');
  finished.catch(() => undefined); // an error while waiting for 'drain' is thrown there; not twice
  for (const batch of batches(parts, GZIP_BATCH_BYTES)) {
    if (!zip.write(batch)) await once(zip, 'drain');
  }
  zip.end();
  await finished;
  return Buffer.concat(out);
}

const GZIP_BATCH_BYTES = 1 << 20;
const GZIP_CHUNK_BYTES = 256 * 1024;

/** Consecutive parts joined into buffers of at least `size` bytes (the last may be smaller). */
function* batches(parts: readonly Buffer[], size: number): Generator<Buffer> {
  let group: Buffer[] = [];
  let bytes = 0;
  for (const part of parts) {
    group.push(part);
    bytes += part.length;
    if (bytes >= size) {
      yield group.length === 1 ? group[0]! : Buffer.concat(group, bytes);
      group = [];
      bytes = 0;
    }
  }
  if (group.length > 0) yield group.length === 1 ? group[0]! : Buffer.concat(group, bytes);
}

/**
 * Level 1: a third of the CPU of the default level for about 8% more bytes on exposition text
 * (measured on 4 MB: 16 ms vs 50 ms); the CPU is paid on every swap.
 */
const GZIP_OPTIONS = { level: 1 };

export function familyHeader(def: FamilyDef): string {
  return `# HELP ${def.name} ${escapeHelp(def.help)}\n# TYPE ${def.name} ${def.type}\n`;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
