/**
 * The web config of the running process: loaded at start (a bad file stops the start), re-read
 * when the file or a certificate, key or CA file it names changes and on SIGHUP. A bad new file is
 * logged with its path and problems and the last good config stays in force.
 *
 * Changes are found by one poll of all the files (their mtime, size and inode), and a reload waits
 * until a poll finds nothing more changing: a certificate and its key rewritten one after the
 * other are read together, in one reload, never the new certificate with the old key.
 */
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import { loadWebConfig, NO_WEB_CONFIG, WebConfigError, type WebConfig } from './web-config.js';

export type WebConfigListener = (next: WebConfig, previous: WebConfig) => void;

export class WebConfigSource {
  private config: WebConfig;
  private readonly listeners: WebConfigListener[] = [];
  /** What each watched file looked like at the last poll ('' when it could not be read). */
  private seen = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  /** A poll found a change; the reload waits for a poll that finds none. */
  private changing = false;

  /** Loads `file` (none: plain HTTP without auth); throws a WebConfigError when it is bad. */
  constructor(
    readonly file: string | undefined,
    private readonly log: Logger,
  ) {
    this.config = file === undefined ? NO_WEB_CONFIG : loadWebConfig(file);
  }

  get current(): WebConfig {
    return this.config;
  }

  /** Called after every successful reload, with the new and the previous config. */
  onChange(listener: WebConfigListener): void {
    this.listeners.push(listener);
  }

  /** Re-reads the file; returns whether the new one is now in force. */
  reload(why: string): boolean {
    if (this.file === undefined) return false;
    let next: WebConfig;
    try {
      next = loadWebConfig(this.file);
    } catch (error) {
      const problems = error instanceof WebConfigError ? error.problems : [error instanceof Error ? error.message : String(error)];
      this.log.error({ webConfigFile: this.file, problems, trigger: why }, 'the web config is invalid; the previous one stays in force');
      return false;
    }
    const previous = this.config;
    this.config = next;
    for (const listener of this.listeners) listener(next, previous);
    if (this.timer) this.watchFiles(next.files);
    this.log.info({ webConfigFile: this.file, trigger: why, tls: next.tls !== undefined, users: next.users.size }, 'web config reloaded');
    return true;
  }

  /**
   * Polls the file and the files it names every `intervalMs`; after a change, reloads once a
   * poll finds them all as they were at the one before.
   */
  watch(intervalMs = 1000): void {
    if (this.file === undefined || this.timer) return;
    this.watchFiles(this.config.files); // the web config file itself is always the first
    this.timer = setInterval(() => this.poll(), intervalMs);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.seen = new Map();
    this.changing = false;
  }

  private poll(): void {
    let changed = false;
    for (const [file, before] of this.seen) {
      const now = stamp(file);
      if (now === before) continue;
      this.seen.set(file, now);
      changed = true;
    }
    if (changed) this.changing = true;
    else if (this.changing) {
      this.changing = false;
      this.reload('file changed');
    }
  }

  /** Watches `files` from what they are now (a file already watched keeps its last stamp). */
  private watchFiles(files: readonly string[]): void {
    this.seen = new Map(files.map((f) => [f, this.seen.get(f) ?? stamp(f)]));
  }
}

function stamp(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs} ${s.size} ${s.ino}`;
  } catch {
    return '';
  }
}
