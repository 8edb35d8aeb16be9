/**
 * The web config of the running process: loaded at start (a bad file stops the start), re-read
 * when the file or a certificate, key or CA file it names changes and on SIGHUP. A bad new file is
 * logged with its path and problems and the last good config stays in force, as it does when the
 * listeners cannot apply a good one.
 *
 * A reload never weakens the running config: a file that would turn TLS off, or remove every basic
 * auth user the running config has (an empty file, one cut right after `basic_auth_users:` by a
 * half-finished write), is refused like a bad one. Turning auth or TLS off takes a restart. TLS is
 * the listeners' mode, fixed at start: a reload that adds `tls_server_config` to a plain-HTTP
 * process applies its users and headers, and its TLS at the next restart.
 *
 * Changes are found by one poll of all the files (their mtime, size and inode), and a reload waits
 * until a poll finds nothing more changing: a certificate and its key rewritten one after the
 * other are read together, in one reload, never the new certificate with the old key.
 */
import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import { loadWebConfig, NO_WEB_CONFIG, WebConfigError, type WebConfig } from './web-config.js';

export type WebConfigListener = (next: WebConfig, previous: WebConfig) => void;
/** The outcome of every reload attempt: true when the new file is in force. */
export type ReloadOutcomeListener = (ok: boolean) => void;

export class WebConfigSource {
  private config: WebConfig;
  private readonly listeners: WebConfigListener[] = [];
  private readonly outcomeListeners: ReloadOutcomeListener[] = [];
  /** Whether the listeners serve TLS: decided by the config at start, for the life of the process. */
  readonly tls: boolean;
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
    this.tls = this.config.tls !== undefined;
  }

  get current(): WebConfig {
    return this.config;
  }

  /**
   * Called with the new and the previous config at every reload that brings a good file. A
   * listener that throws fails the reload: the previous config stays, and every listener is
   * called again with it.
   */
  onChange(listener: WebConfigListener): void {
    this.listeners.push(listener);
  }

  /** Called after every reload attempt (SIGHUP, file change, /-/reload) with whether it applied. */
  onReloadOutcome(listener: ReloadOutcomeListener): void {
    this.outcomeListeners.push(listener);
  }

  /** Re-reads the file; returns whether the new one is now in force. */
  reload(why: string): boolean {
    if (this.file === undefined) return false;
    let loaded: WebConfig;
    try {
      loaded = loadWebConfig(this.file);
    } catch (error) {
      const problems = error instanceof WebConfigError ? error.problems : [error instanceof Error ? error.message : String(error)];
      this.log.error({ webConfigFile: this.file, problems, trigger: why }, 'the web config is invalid; the previous one stays in force');
      return this.outcome(false);
    }
    const previous = this.config;
    const weakening = weakeningProblems(previous, loaded, this.tls);
    if (weakening.length > 0) {
      this.log.error({ webConfigFile: this.file, problems: weakening, trigger: why }, 'the web config would turn off TLS or basic auth; the previous one stays in force (a restart applies it)');
      return this.outcome(false);
    }
    let next = loaded;
    if (loaded.tls && !this.tls) {
      this.log.warn({ webConfigFile: this.file, trigger: why }, 'tls_server_config takes effect after a restart; the listeners keep serving plain HTTP');
      next = withoutTls(loaded);
    }
    this.config = next;
    try {
      for (const listener of this.listeners) listener(next, previous);
    } catch (error) {
      // Not applied (the listeners could not take it): every listener goes back to the previous one.
      this.config = previous;
      for (const listener of this.listeners) {
        try {
          listener(previous, next);
        } catch {
          // The reload fails all the same; the error below says so.
        }
      }
      this.log.error({ webConfigFile: this.file, problems: [error instanceof Error ? error.message : String(error)], trigger: why }, 'the web config cannot be applied; the previous one stays in force');
      return this.outcome(false);
    }
    if (this.timer) this.watchFiles(next.files);
    this.log.info({ webConfigFile: this.file, trigger: why, tls: this.tls, users: next.users.size }, 'web config reloaded');
    return this.outcome(true);
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

  private outcome(ok: boolean): boolean {
    for (const listener of this.outcomeListeners) listener(ok);
    return ok;
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

/**
 * What a new config would switch off that the running one has: TLS the listeners serve, or every
 * basic auth user. Named by section, never by user.
 */
export function weakeningProblems(running: WebConfig, next: WebConfig, tlsServed: boolean): string[] {
  const problems: string[] = [];
  if (tlsServed && next.tls === undefined) problems.push('tls_server_config: missing, which would turn TLS off; turning TLS off takes a restart');
  if (running.users.size > 0 && next.users.size === 0) problems.push('basic_auth_users: no users, which would turn basic auth off; turning basic auth off takes a restart');
  return problems;
}

function withoutTls(config: WebConfig): WebConfig {
  const { tls: _tls, ...rest } = config;
  return rest;
}

function stamp(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs} ${s.size} ${s.ino}`;
  } catch {
    return '';
  }
}
