/**
 * The web config of the running process: loaded at start (a bad file stops the start), re-read
 * when the file or a certificate, key or CA file it names changes (mtime poll) and on SIGHUP. A
 * bad new file is logged with its path and problems and the last good config stays in force.
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from 'pino';
import { loadWebConfig, NO_WEB_CONFIG, WebConfigError, type WebConfig } from './web-config.js';

export type WebConfigListener = (next: WebConfig, previous: WebConfig) => void;

export class WebConfigSource {
  private config: WebConfig;
  private readonly listeners: WebConfigListener[] = [];
  private watched: readonly string[] = [];
  private pollMs = 0;
  private readonly onStat = (curr: Stats, prev: Stats): void => {
    if (curr.mtimeMs !== prev.mtimeMs || curr.size !== prev.size || curr.ino !== prev.ino) this.reload('file changed');
  };

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
    if (this.pollMs > 0) this.watchFiles(next.files);
    this.log.info({ webConfigFile: this.file, trigger: why, tls: next.tls !== undefined, users: next.users.size }, 'web config reloaded');
    return true;
  }

  /** Polls the mtime of the file and of the files it names, every `intervalMs`. */
  watch(intervalMs = 1000): void {
    if (this.file === undefined) return;
    this.pollMs = intervalMs;
    this.watchFiles(this.config.files); // the web config file itself is always the first
  }

  close(): void {
    for (const f of this.watched) unwatchFile(f, this.onStat);
    this.watched = [];
    this.pollMs = 0;
  }

  private watchFiles(files: readonly string[]): void {
    for (const f of this.watched) if (!files.includes(f)) unwatchFile(f, this.onStat);
    for (const f of files) if (!this.watched.includes(f)) watchFile(f, { interval: this.pollMs, persistent: false }, this.onStat);
    this.watched = [...files];
  }
}
