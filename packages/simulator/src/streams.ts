/**
 * Simulated streams: stored configuration (what PUT merges into) plus runtime state that the
 * clock moves (bytes, alive/down, failover, errors, transcoder, DVR depth), rendered as the API
 * object in one of two shapes:
 *
 * - `flat` (Flussonic 23.x/24.x; 23.05 OpenAPI `stream_stats_base`, 2021 runtime sample):
 *   `stats.bytes_in`, `client_count`, `retry_count`, `input_error_rate`, `out_bandwidth`,
 *   `inputs[].stats`, `pushes[].stats`.
 * - `nested` (2025; go-flussonic `StreamStats`): `stats.input`, `stats.inputs[]`,
 *   `stats.transcoder`, `stats.push[]`, `stats.play`, `online_clients`, `output_bandwidth` (bps).
 *   `stats.input` and each input's `stats.inputs[i]` (= `inputs[i].stats`) have the same schema
 *   (go-flussonic `InputStats`), aggregated in `stats.input`: its counters are the stream's, over
 *   all its inputs (`bytes` "received by this stream ... will sum all inputs", `input_switches`
 *   "Aggregated: how many times this stream has switched between different inputs. Individual
 *   input: number of times switched to this input"), so they go on across an input switch.
 */
import type { Json, JsonRecord } from './query.js';
import type { Rng } from './rng.js';

export type StatsShape = 'flat' | 'nested';
export type StreamStatus = 'running' | 'waiting' | 'error';

/** Input error counters of the 2025 shape (`stats.input.errors_<error>`), by input protocol. */
const MPEGTS_INPUT_ERRORS = ['errors_lost_packets', 'errors_dropped_frames', 'errors_desync', 'errors_broken_payload', 'errors_ts_pat', 'errors_ts_service_lost'] as const;
const HTTP_INPUT_ERRORS = ['errors_403', 'errors_404', 'errors_500', 'errors_dropped_frames', 'errors_broken_payload', 'errors_decoder_reset'] as const;
const AD_COUNTERS = ['input_ad_announces', 'output_ad_announces', 'output_shifted_ad_announces', 'input_ad_immediate', 'output_ad_immediate'] as const;

/** Mean times between random events, in ms of simulated time. */
const STREAM_FAILURE_EVERY = 8 * 3600_000;
const PRIMARY_FAILURE_EVERY = 4 * 3600_000;
const TRANSCODER_RESTART_EVERY = 12 * 3600_000;
const PUSH_RETRY_EVERY = 6 * 3600_000;
const RETRY_INTERVAL = 5_000;
/** Time from creating an input instance (opened_at) to its network connection (connected_at), ms. */
const CONNECT_MS = 120;
/** `input_stats.error` of a failed input (23.x: free text, the last source error). */
const INPUT_ERROR_TEXT = 'connection refused';

interface InputRuntime {
  id: string;
  url: string;
  bytes: number;
  openedAt: number;
  ip: string;
  frames: number;
  retries: number;
  errors: Record<string, number>;
  /** Times the stream switched to this input. */
  switchesTo: number;
  /** Sim time until which this input is failed (primary-input failures drive failover). */
  failedUntil: number;
  /** Sim time of the last frame this input delivered; 0 = none yet. */
  lastDtsAt: number;
}

interface PushRuntime {
  id: string;
  bytes: number;
  retries: number;
  openedAt: number;
  errorsConnectionLost: number;
}

interface TranscoderRuntime {
  hw: string;
  deviceId: number | undefined;
  frames: number;
  restarts: number;
  tracks: { track_id: string; dup_frames_added: number; overlimit_frames_removed: number }[];
  ads: Record<string, number>;
}

export interface StreamDeps {
  readonly shape: StatsShape;
  readonly hostname: string;
  /** Open sessions per stream name (the sessions store keeps it). */
  clientsOf(name: string): number;
  /** Open sessions per protocol for one stream (2025 `stats.play`). */
  clientsByProto(name: string): ReadonlyMap<string, number>;
  /** Load of a transcoder device, to decide `transcoder_overloaded`. */
  deviceLoad(deviceId: number): number;
}

export class SimStream {
  /** The API object as of the last render(); see docAt(). */
  private rendered: JsonRecord = {};
  /** Set when state changed since the last render: documents are built when read, not per step. */
  dirty = true;
  config: JsonRecord;

  id: string;
  sourceId: string;
  nominalKbps: number;
  currentKbps: number;
  fps: number;
  alive = true;
  status: StreamStatus = 'running';
  /** Set by tests (setAlive/setStatus): no automatic recovery while set. */
  pinned = false;
  downUntil = 0;
  backupRunning = false;
  activeInput = 0;
  openedAt: number;
  startRunningAt: number;
  lastDtsAt: number;
  lastAccessAt: number;
  bytesIn = 0;
  bytesOut = 0;
  retryCount = 0;
  retryAccumulator = 0;
  inputSwitches = 0;
  /** The stream's input counters over all its inputs, past and present (2025 `stats.input`); bytesIn is its bytes. */
  inputFrames = 0;
  inputRetries = 0;
  inputErrors: Record<string, number> = {};
  inputErrorRate = 0;
  secondsOnPrimary = 0;
  secondsOnSecondary = 0;
  playBytesByProto = new Map<string, number>();
  playDurationByProto = new Map<string, number>();
  playTotalByProto = new Map<string, number>();
  inputs: InputRuntime[] = [];
  pushes: PushRuntime[] = [];
  transcoder: TranscoderRuntime | undefined;
  dvrFrom = 0;
  dvrBytes = 0;
  tracks: JsonRecord[] = [];
  /** The same tracks with the 2025 extras (avg_fps, avg_gop, bandwidth); built with the config. */
  private nestedTracks: JsonRecord[] = [];

  constructor(
    readonly name: string,
    config: JsonRecord,
    readonly namedBy: 'config' | 'user' | 'remote',
    public position: number | null,
    rng: Rng,
    now: number,
    bitrateKbps: number,
  ) {
    this.config = config;
    this.id = rng.uuid();
    this.sourceId = rng.uuid();
    this.nominalKbps = bitrateKbps;
    this.currentKbps = bitrateKbps;
    this.fps = rng.pick([25, 25, 30, 50]);
    const age = rng.int(60_000, 3 * 24 * 3600_000);
    this.openedAt = now - age;
    this.startRunningAt = this.openedAt + rng.int(200, 3000);
    this.lastDtsAt = now;
    this.lastAccessAt = now - rng.int(0, 60_000);
    this.bytesIn = Math.round((bitrateKbps * 125 * age) / 1000);
    this.bytesOut = Math.round(this.bytesIn * rng.float(0.5, 20));
    this.dvrFrom = now - Math.min(age, 3 * 24 * 3600_000);
    this.dvrBytes = Math.round((bitrateKbps * 125 * (now - this.dvrFrom)) / 1000);
    this.applyConfig(config, rng, now);
  }

  /** A stream created just now (PUT): it and its inputs have received nothing yet. */
  openedNow(now: number): void {
    this.bytesIn = 0;
    for (const input of this.inputs) input.bytes = 0;
    this.openedAt = now;
    this.startRunningAt = now;
  }

  /** Reconcile runtime state with a (new) configuration: inputs, pushes, transcoder, tracks. */
  applyConfig(config: JsonRecord, rng: Rng, now: number): void {
    this.config = config;
    const inputs = Array.isArray(config.inputs) ? (config.inputs as JsonRecord[]) : [];
    this.inputs = inputs.map((input, i) => {
      const url = typeof input.url === 'string' ? input.url : '';
      const old = this.inputs.find((r) => r.url === url);
      return (
        old ?? {
          id: rng.uuid(),
          url,
          bytes: i === 0 ? this.bytesIn : 0,
          openedAt: now - rng.int(1000, 600_000),
          ip: `10.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
          frames: 0,
          retries: 0,
          errors: Object.fromEntries((/^(hls|https?|tshttp|m4f)/.test(url) ? HTTP_INPUT_ERRORS : MPEGTS_INPUT_ERRORS).map((e) => [e, 0])),
          switchesTo: 0,
          failedUntil: 0,
          lastDtsAt: i === 0 && this.alive ? this.lastDtsAt : 0,
        }
      );
    });
    if (this.activeInput >= this.inputs.length) this.activeInput = 0;
    // The stream counts the error kinds of every input it has had, each from 0 when first seen.
    for (const input of this.inputs) for (const key of Object.keys(input.errors)) this.inputErrors[key] ??= 0;
    const pushes = Array.isArray(config.pushes) ? (config.pushes as JsonRecord[]) : [];
    this.pushes = pushes.map((_, i) => {
      const openedAt = now - rng.int(1000, 3600_000);
      return this.pushes[i] ?? { id: rng.uuid(), bytes: Math.round((this.nominalKbps * 125 * (now - openedAt)) / 1000), retries: 0, openedAt, errorsConnectionLost: 0 };
    });

    const tc = config.transcoder;
    if (tc && typeof tc === 'object' && !Array.isArray(tc)) {
      const video = Array.isArray(tc.video) ? (tc.video as JsonRecord[]) : [];
      const global = tc.global && typeof tc.global === 'object' && !Array.isArray(tc.global) ? tc.global : {};
      const hw = typeof global.hw === 'string' ? global.hw : 'cpu';
      const deviceId = typeof global.deviceid === 'number' ? global.deviceid : undefined;
      const trackIds = [...video.map((_, i) => `v${i + 1}`), 'a1'];
      const old = this.transcoder;
      this.transcoder = {
        hw,
        deviceId,
        frames: old?.frames ?? 0,
        restarts: old?.restarts ?? 0,
        tracks: trackIds.map((track_id) => old?.tracks.find((t) => t.track_id === track_id) ?? { track_id, dup_frames_added: 0, overlimit_frames_removed: 0 }),
        ads: old?.ads ?? Object.fromEntries(AD_COUNTERS.map((k) => [k, 0])),
      };
    } else {
      this.transcoder = undefined;
    }
    this.tracks = this.buildTracks();
    this.nestedTracks = this.tracks.map(nestedTrack);
    this.dirty = true;
  }

  private buildTracks(): JsonRecord[] {
    const video = this.transcoder && Array.isArray((this.config.transcoder as JsonRecord).video) ? ((this.config.transcoder as JsonRecord).video as JsonRecord[]) : [];
    const audio: JsonRecord = { content: 'audio', track_id: 'a1', codec: 'aac', bitrate: 128, channels: 2, sample_rate: 48000, language: 'eng' };
    // Radio (a few hundred kbit/s) carries audio only.
    if (video.length === 0 && this.nominalKbps < 300) return [{ ...audio, bitrate: this.nominalKbps }];
    const ladder = video.length > 0 ? video.map((v) => (typeof v.bitrate === 'number' ? v.bitrate : this.nominalKbps)) : [Math.max(64, this.nominalKbps - 128)];
    const heights = [1080, 720, 480, 360, 240];
    const tracks: JsonRecord[] = ladder.map((kbps, i) => {
      const height = heights[Math.min(i + (this.nominalKbps < 3000 ? 1 : 0), heights.length - 1)] as number;
      const width = Math.round((height * 16) / 9 / 2) * 2;
      return {
        content: 'video',
        track_id: `v${i + 1}`,
        codec: 'h264',
        bitrate: kbps,
        width,
        height,
        pixel_width: width,
        pixel_height: height,
        sar_width: 1,
        sar_height: 1,
        fps: this.fps,
        last_gop: this.fps * 2,
        pix_fmt: 'yuv420p',
        profile: 'main',
        level: height >= 1080 ? '4.1' : '3.1',
      };
    });
    tracks.push(audio);
    return tracks;
  }

  get hasDvr(): boolean {
    return this.config.dvr !== undefined && this.config.dvr !== null;
  }

  get dvrExpiration(): number {
    const dvr = this.config.dvr as JsonRecord | undefined;
    return dvr && typeof dvr.expiration === 'number' ? dvr.expiration : 3 * 24 * 3600;
  }

  get hasBackupFile(): boolean {
    const backup = this.config.backup as JsonRecord | undefined;
    return !!backup && typeof backup.file === 'string';
  }

  /** Move this stream's counters and state forward by dt ms (dynamic events only when churn). */
  step(dt: number, now: number, rng: Rng, churn: boolean, deps: StreamDeps): void {
    if (churn) this.randomEvents(dt, now, rng);
    if (!this.pinned && !this.alive && this.downUntil > 0 && now >= this.downUntil) this.recover(now);
    this.updateActiveInput(now);

    const seconds = dt / 1000;
    const flowing = this.alive || this.backupRunning;
    if (this.alive) {
      this.currentKbps = Math.max(1, Math.round(this.nominalKbps * (1 + 0.04 * rng.gaussian())));
      const bytes = Math.round(this.currentKbps * 125 * seconds);
      this.bytesIn += bytes;
      const input = this.inputs[this.activeInput];
      if (input) {
        const frames = Math.round(this.fps * seconds);
        input.bytes += bytes;
        input.frames += frames;
        this.inputFrames += frames;
        input.lastDtsAt = now;
        if (churn) for (const key of Object.keys(input.errors)) this.countInputErrors(input, key, rng.poisson(0.002 * seconds));
      }
      this.lastDtsAt = now;
      if (this.activeInput === 0) this.secondsOnPrimary += seconds;
      else this.secondsOnSecondary += seconds;
      this.inputErrorRate = churn ? rng.poisson(0.05) : 0;
    } else {
      this.currentKbps = 0;
      this.inputErrorRate = 0;
      this.retryAccumulator += dt;
      while (this.retryAccumulator >= RETRY_INTERVAL) {
        this.retryAccumulator -= RETRY_INTERVAL;
        this.retryCount++;
        const input = this.inputs[this.activeInput];
        if (input) {
          // Every reconnect attempt is a new input instance: a new opened_at (and connected_at).
          input.retries++;
          this.inputRetries++;
          input.openedAt = now;
        }
      }
    }

    const clients = deps.clientsOf(this.name);
    if (clients > 0) this.lastAccessAt = now;
    const outKbps = flowing ? clients * Math.max(this.currentKbps, this.backupRunning ? 500 : 0) : 0;
    this.bytesOut += Math.round(outKbps * 125 * seconds);
    if (flowing) {
      for (const [proto, n] of deps.clientsByProto(this.name)) {
        this.playBytesByProto.set(proto, (this.playBytesByProto.get(proto) ?? 0) + Math.round(n * this.currentKbps * 125 * seconds));
        this.playDurationByProto.set(proto, (this.playDurationByProto.get(proto) ?? 0) + Math.round(n * seconds));
      }
    }
    if (this.alive) {
      for (const push of this.pushes) push.bytes += Math.round(this.currentKbps * 125 * seconds);
      if (this.transcoder) {
        this.transcoder.frames += Math.round(this.fps * seconds * (this.transcoder.tracks.length - 1));
        if (churn) {
          for (const t of this.transcoder.tracks) {
            t.dup_frames_added += rng.poisson(0.01 * seconds);
            t.overlimit_frames_removed += rng.poisson(0.004 * seconds);
          }
          for (const k of AD_COUNTERS) if (rng.chance(0.0005 * seconds)) this.transcoder.ads[k] = (this.transcoder.ads[k] as number) + 1;
        }
      }
      if (this.hasDvr) this.dvrBytes += Math.round(this.currentKbps * 125 * seconds);
    }
    if (this.hasDvr) {
      const expirationMs = this.dvrExpiration * 1000;
      if (now - this.dvrFrom > expirationMs) {
        const trimmed = now - expirationMs - this.dvrFrom;
        this.dvrBytes = Math.max(0, this.dvrBytes - Math.round((this.nominalKbps * 125 * trimmed) / 1000));
        this.dvrFrom = now - expirationMs;
      }
    }
    this.dirty = true;
  }

  private randomEvents(dt: number, now: number, rng: Rng): void {
    if (this.pinned) return;
    if (this.alive && rng.chance(1 - Math.exp(-dt / STREAM_FAILURE_EVERY))) {
      this.goDown(now, now + rng.int(20_000, 600_000));
    }
    if (this.inputs.length > 1 && this.alive) {
      const primary = this.inputs[0] as InputRuntime;
      if (primary.failedUntil <= now && rng.chance(1 - Math.exp(-dt / PRIMARY_FAILURE_EVERY))) {
        primary.failedUntil = now + rng.int(30_000, 900_000);
      }
    }
    if (this.alive && this.transcoder && rng.chance(1 - Math.exp(-dt / TRANSCODER_RESTART_EVERY))) this.transcoder.restarts++;
    for (const push of this.pushes) {
      if (rng.chance(1 - Math.exp(-dt / PUSH_RETRY_EVERY))) {
        push.retries++;
        push.errorsConnectionLost++;
        push.openedAt = now;
      }
    }
  }

  /** The primary input is used whenever it works; a failed primary fails over to the next one. */
  private updateActiveInput(now: number): void {
    if (this.inputs.length < 2) return;
    const wanted = this.inputs.findIndex((input) => input.failedUntil <= now);
    const next = wanted < 0 ? this.activeInput : wanted;
    if (next !== this.activeInput) {
      this.activeInput = next;
      this.inputSwitches++;
      const input = this.inputs[next];
      if (input) {
        input.switchesTo++;
        input.openedAt = now;
      }
      this.sourceId = this.sourceId.slice(0, 24) + now.toString(16).padStart(12, '0').slice(-12);
    }
  }

  goDown(now: number, until: number, status: StreamStatus = 'error'): void {
    if (!this.alive && this.status === status) return;
    this.dirty = true;
    this.alive = false;
    this.status = status;
    this.downUntil = until;
    this.retryAccumulator = 0;
    this.backupRunning = this.hasBackupFile;
  }

  recover(now: number): void {
    this.dirty = true;
    this.alive = true;
    this.status = 'running';
    this.downUntil = 0;
    this.backupRunning = false;
    this.lastDtsAt = now;
    this.startRunningAt = now;
    this.sourceId = this.sourceId.slice(0, 24) + now.toString(16).padStart(12, '0').slice(-12);
  }

  /** Switch to (or back from) the secondary input now, as a failover would. */
  setFailover(active: boolean, now: number): void {
    if (this.inputs.length < 2) throw new Error(`stream ${this.name} has fewer than two inputs; failover needs a backup input`);
    (this.inputs[0] as InputRuntime).failedUntil = active ? Number.POSITIVE_INFINITY : 0;
    this.updateActiveInput(now);
  }

  /** `count` more errors of kind `error` (`errors_<error>`) on the active input. */
  addInputErrors(error: string, count: number): void {
    const input = this.inputs[this.activeInput];
    const key = `errors_${error}`;
    if (!input || !(key in input.errors)) throw new Error(`the active input of stream ${this.name} counts no ${key}`);
    this.countInputErrors(input, key, count);
    this.dirty = true;
  }

  /** Input errors count on the input and on the stream alike. */
  private countInputErrors(input: InputRuntime, key: string, count: number): void {
    input.errors[key] = (input.errors[key] ?? 0) + count;
    this.inputErrors[key] = (this.inputErrors[key] ?? 0) + count;
  }

  // ---- rendering ---------------------------------------------------------------------------

  /** The API object, built now if the state changed since it was last built. Do not mutate. */
  docAt(now: number, deps: StreamDeps): JsonRecord {
    if (this.dirty) {
      this.render(now, deps);
      this.dirty = false;
    }
    return this.rendered;
  }

  private render(now: number, deps: StreamDeps): void {
    const clients = deps.clientsOf(this.name);
    const config = this.config;
    const doc: JsonRecord = { name: this.name };
    for (const key of Object.keys(config)) {
      if (key === 'inputs' || key === 'pushes') continue;
      doc[key] = config[key] as Json;
    }
    doc.named_by = this.namedBy;
    // 23.05 says position is nullable; 2025 servers leave an unset position out.
    if (this.position !== null || deps.shape === 'flat') doc.position = this.position;
    doc.static = typeof config.static === 'boolean' ? config.static : this.namedBy !== 'remote';
    const inputs = Array.isArray(config.inputs) ? (config.inputs as JsonRecord[]) : [];
    const pushes = Array.isArray(config.pushes) ? (config.pushes as JsonRecord[]) : [];
    if (deps.shape === 'flat') {
      doc.inputs = inputs.map((input, i) => ({ ...input, stats: this.flatInputStats(i, now) }));
      if (pushes.length > 0) doc.pushes = pushes.map((push, i) => ({ ...push, stats: this.flatPushStats(i) }));
      doc.stats = this.flatStats(now, clients);
    } else {
      const stats = this.nestedStats(now, clients, deps);
      // 2025 servers send each input's runtime both in stats.inputs[i] and in inputs[i].stats
      // (go-flussonic streams_list example); the same object serves both.
      const inputStats = Array.isArray(stats.inputs) ? stats.inputs : [];
      doc.inputs = inputs.map((input, i) => (inputStats[i] ? { ...input, stats: inputStats[i] } : input));
      if (pushes.length > 0) doc.pushes = pushes;
      doc.stats = stats;
    }
    this.rendered = doc;
  }

  private tsDelay(now: number): number {
    return this.alive ? 40 + Math.round((now / 7) % 200) : now - this.lastDtsAt;
  }

  /** The stats fields both shapes carry alike: identity, times, input delay, backup, DVR switch. */
  private lifecycleStats(now: number): JsonRecord {
    return {
      id: this.id,
      source_id: this.sourceId,
      opened_at: this.openedAt,
      start_running_at: this.startRunningAt,
      last_access_at: this.lastAccessAt,
      last_dts: (this.lastDtsAt - this.openedAt) * 90,
      last_dts_at: this.lastDtsAt,
      lifetime: now - this.startRunningAt,
      ts_delay: this.tsDelay(now),
      backup_running: this.backupRunning,
      dvr_enabled: this.hasDvr,
    };
  }

  private flatStats(now: number, clients: number): JsonRecord {
    const input = this.inputs[this.activeInput];
    const stats: JsonRecord = {
      alive: this.alive,
      status: this.status,
      running: this.alive,
      bitrate: this.alive ? this.currentKbps : 0,
      input_bitrate: this.alive ? this.currentKbps : 0,
      output_bitrate: this.alive ? this.currentKbps : 0,
      bytes_in: this.bytesIn,
      bytes_out: this.bytesOut,
      client_count: clients,
      online_clients: clients,
      out_bandwidth: this.alive ? clients * this.currentKbps : 0,
      retry_count: this.retryCount,
      input_error_rate: this.inputErrorRate,
      ...this.lifecycleStats(now),
      dvr_only: false,
      dvr_replication_running: false,
      publish_enabled: input !== undefined && input.url.startsWith('publish://'),
      remote: this.namedBy === 'remote',
      running_transcoder: this.transcoder !== undefined && this.alive,
      transcoder_overloaded: false,
      media_info: { tracks: this.alive ? this.tracks : [] },
    };
    if (input) stats.url = input.url;
    if (this.hasDvr) stats.dvr_info = this.dvrInfo(now);
    return stats;
  }

  /** 23.05 `input_stats`: opened_at in Unix seconds, connected_at and last_dts_at in ms, error text. */
  private flatInputStats(i: number, now: number): JsonRecord {
    const input = this.inputs[i] as InputRuntime;
    const active = i === this.activeInput && this.alive;
    return {
      id: input.id,
      url: input.url,
      ip: input.ip,
      opened_at: Math.floor(input.openedAt / 1000),
      connected_at: input.openedAt + CONNECT_MS,
      bytes: input.bytes,
      active,
      ...(input.lastDtsAt > 0 ? { last_dts_at: input.lastDtsAt } : {}),
      ...(this.inputFailing(i, now) ? { error: INPUT_ERROR_TEXT } : {}),
    };
  }

  /** A failed input, or the active one of a stream that is down. */
  private inputFailing(i: number, now: number): boolean {
    return (this.inputs[i] as InputRuntime).failedUntil > now || (!this.alive && i === this.activeInput);
  }

  private flatPushStats(i: number): JsonRecord {
    const push = this.pushes[i] as PushRuntime;
    return { id: push.id, opened_at: Math.floor(push.openedAt / 1000), bytes: push.bytes, retries: push.retries, status: this.alive ? 'running' : 'retry' };
  }

  /** One input's own `input_stats` (`stats.inputs[i]`, `inputs[i].stats`): its counters since it was added. */
  private nestedInputStats(i: number, now: number): JsonRecord {
    const input = this.inputs[i] as InputRuntime;
    const active = i === this.activeInput;
    const stats: JsonRecord = {
      active: active && this.alive,
      url: input.url,
      ip: input.ip,
      proto: protoOf(input.url),
      opened_at: input.openedAt,
      bytes: input.bytes,
      frames: input.frames,
      retries: input.retries,
      error_rate: active ? this.inputErrorRate : 0,
      input_switches: input.switchesTo,
      ...input.errors,
    };
    if (input.lastDtsAt > 0) stats.last_dts_at = input.lastDtsAt;
    if (active) {
      stats.ts_delay = this.tsDelay(now);
      if (this.alive) stats.media_info = { tracks: this.tracks };
    }
    return stats;
  }

  /**
   * `stats.input`: the stream's `input_stats`, aggregated over its inputs. The counters are the
   * stream's own (they neither fall nor jump when the active input changes); the fields that
   * describe one input (url, ip, proto, opened_at, active, last frame, media) are the active
   * input's, as the schema does not say what an aggregate carries there.
   */
  private nestedStreamInputStats(inputs: readonly JsonRecord[], now: number): JsonRecord {
    return {
      ...inputs[this.activeInput],
      bytes: this.bytesIn,
      frames: this.inputFrames,
      retries: this.inputRetries,
      error_rate: this.inputErrorRate,
      input_switches: this.inputSwitches,
      ...this.inputErrors,
      num_sec_on_primary_input: Math.round(this.secondsOnPrimary),
      num_sec_on_secondary_input: Math.round(this.secondsOnSecondary),
      valid_secondary_inputs: this.inputs.filter((input, j) => j !== this.activeInput && input.failedUntil <= now).length,
    };
  }

  private nestedStats(now: number, clients: number, deps: StreamDeps): JsonRecord {
    const stats: JsonRecord = {
      alive: this.alive,
      status: this.status,
      bitrate: this.alive ? this.currentKbps : 0,
      input_bitrate: this.alive ? this.currentKbps : 0,
      bytes_out: this.bytesOut,
      online_clients: clients,
      output_bandwidth: this.alive ? clients * this.currentKbps * 1000 : 0,
      ...this.lifecycleStats(now),
      dvr_replication_running: false,
      running_transcoder: this.transcoder !== undefined && this.alive,
      transcoder_overloaded: this.transcoder?.deviceId !== undefined && deps.deviceLoad(this.transcoder.deviceId) > 90,
      running_on: [deps.hostname],
      media_info: { flow_type: 'stream', tracks: this.alive ? this.nestedTracks : [] },
    };
    if (this.inputs.length > 0) {
      const inputs = this.inputs.map((_, i) => this.nestedInputStats(i, now));
      stats.input = this.nestedStreamInputStats(inputs, now);
      stats.inputs = inputs;
    }
    if (this.transcoder) {
      const tc = this.transcoder;
      const target = this.nominalKbps >= 6000 ? 'uhdtv' : this.nominalKbps >= 2500 ? 'hdtv' : 'sdtv_pal';
      stats.transcoder = { hw: tc.hw, target, qualities: tc.tracks.length - 1, frames: tc.frames, restarts: tc.restarts, tracks: tc.tracks.map((t) => ({ ...t })), ...tc.ads, burn_logo: false, burn_text: false };
    }
    if (this.pushes.length > 0) {
      const pushes = Array.isArray(this.config.pushes) ? (this.config.pushes as JsonRecord[]) : [];
      stats.push = this.pushes.map((p, i) => ({
        url: (pushes[i]?.url as string | undefined) ?? '',
        opened_at: p.openedAt,
        bytes: p.bytes,
        retries: p.retries,
        errors_connection_lost: p.errorsConnectionLost,
        status: this.alive ? 'running' : 'retry',
      }));
    }
    const byProto = deps.clientsByProto(this.name);
    for (const proto of byProto.keys()) this.playTotalByProto.set(proto, Math.max(this.playTotalByProto.get(proto) ?? 0, byProto.get(proto) ?? 0));
    stats.play = {
      play_opened_sessions_by_proto: Object.fromEntries(byProto),
      play_total_sessions_by_proto: Object.fromEntries(this.playTotalByProto),
      play_bytes_by_proto: Object.fromEntries(this.playBytesByProto),
      play_duration_by_proto: Object.fromEntries(this.playDurationByProto),
    };
    if (this.hasDvr) stats.dvr_info = this.dvrInfo(now);
    return stats;
  }

  private dvrInfo(now: number): JsonRecord {
    const from = Math.floor(this.dvrFrom / 1000);
    const depth = Math.floor((now - this.dvrFrom) / 1000);
    return { from, depth, duration: depth, bytes: this.dvrBytes, disk_size: this.dvrBytes, ranges: [{ from, duration: depth }] };
  }
}

function nestedTrack(track: JsonRecord): JsonRecord {
  if (track.content !== 'video') return { ...track, bandwidth: Math.round((track.bitrate as number) * 1.05) };
  return { ...track, avg_fps: track.fps as number, avg_gop: track.last_gop as number, bandwidth: Math.round((track.bitrate as number) * 1.05) };
}

const PROTO_OF_SCHEME: Readonly<Record<string, string>> = { udp: 'udp', hls: 'hls', http: 'tshttp', https: 'tshttps', tshttp: 'tshttp', rtmp: 'rtmp', rtsp: 'rtsp', srt: 'srt', publish: 'rtmp', m4f: 'm4f', fake: 'fake', file: 'file' };

/** The `protocol` enum value of an input URL. */
export function protoOf(url: string): string {
  const colon = url.indexOf(':');
  return PROTO_OF_SCHEME[colon < 0 ? url : url.slice(0, colon)] ?? 'copy';
}

// ---- generation ----------------------------------------------------------------------------

const CATEGORIES = ['live', 'sport', 'news', 'kids', 'movies', 'music', 'cam', 'radio'] as const;

export interface GeneratedStream {
  name: string;
  config: JsonRecord;
  namedBy: 'config' | 'user' | 'remote';
  bitrateKbps: number;
}

/** Stream number i of a world: names with and without `/`, one or two inputs, some pushes, transcoders, DVR. */
export function generateStream(i: number, rng: Rng, options: { gpus: number; dvrNames: readonly string[] }): GeneratedStream {
  const category = CATEGORIES[i % CATEGORIES.length] as (typeof CATEGORIES)[number];
  const n = String(i + 1).padStart(4, '0');
  let name: string;
  if (i % 17 === 5) name = `ch${n}`;
  else if (category === 'sport' && i % 3 === 0) name = `sport/hd/match-${n}`;
  else name = `${category}/${category === 'cam' ? 'entrance' : 'ch'}-${n}`;
  const namedBy: GeneratedStream['namedBy'] = i % 29 === 7 ? 'remote' : i % 31 === 11 ? 'user' : 'config';

  const hd = rng.chance(0.5);
  const bitrateKbps = category === 'radio' ? rng.int(96, 192) : category === 'cam' ? rng.int(500, 2000) : hd ? rng.int(3500, 8000) : rng.int(1200, 3000);
  const inputs: JsonRecord[] = [];
  if (namedBy === 'remote') {
    inputs.push({ url: `m4f://origin-${rng.int(1, 4)}.example.net/${name}` });
  } else if (category === 'cam') {
    // Cameras carry credentials in their URL: the exporter must never expose input URLs.
    inputs.push({ url: `rtsp://viewer:cam-${rng.hex(6)}@10.20.${rng.int(0, 255)}.${rng.int(1, 254)}:554/h264`, source_timeout: 20 });
  } else {
    inputs.push({ url: rng.chance(0.5) ? `udp://239.0.${rng.int(0, 255)}.${rng.int(1, 254)}:1234` : `hls://origin-${rng.int(1, 4)}.example.net/${name}/index.m3u8`, priority: 1 });
    if (rng.chance(0.4)) inputs.push({ url: `hls://backup-${rng.int(1, 2)}.example.net/${name}/index.m3u8`, priority: 2 });
  }
  const config: JsonRecord = { title: `${category[0]!.toUpperCase()}${category.slice(1)} ${i + 1}${hd ? ' HD' : ''}`, inputs };
  if (rng.chance(0.12)) {
    config.pushes = [{ url: `rtmp://a.rtmp.example.com/live2/key-${rng.hex(12)}` }];
    if (rng.chance(0.3)) (config.pushes as JsonRecord[]).push({ url: `srt://cdn.example.org:9000?streamid=${rng.hex(8)}` });
  }
  if (category !== 'radio' && category !== 'cam' && rng.chance(0.2)) {
    const gpu = options.gpus > 0;
    config.transcoder = {
      video: hd ? [{ track: 1, bitrate: 4500, codec: 'h264' }, { track: 2, bitrate: 2500, codec: 'h264' }, { track: 3, bitrate: 900, codec: 'h264' }] : [{ track: 1, bitrate: 2000, codec: 'h264' }, { track: 2, bitrate: 800, codec: 'h264' }],
      audio: { codec: 'aac', bitrate: 128 },
      global: gpu ? { hw: 'nvenc', deviceid: rng.int(0, options.gpus - 1) } : { hw: 'cpu' },
    };
  }
  if (rng.chance(0.3)) {
    config.dvr = options.dvrNames.length > 0 ? { reference: rng.pick(options.dvrNames), expiration: rng.pick([86400, 3 * 86400, 7 * 86400]) } : { root: '/storage/dvr', expiration: 86400 };
  }
  if (rng.chance(0.1)) config.backup = { file: 'vod/blank.mp4', timeout: 10 };
  if (rng.chance(0.05)) config.labels = { tier: hd ? 'premium' : 'basic' };
  return { name, config, namedBy, bitrateKbps };
}
