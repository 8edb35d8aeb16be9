/**
 * Runs `node dist/main.js` as a child process for the CLI tests: collects its output, parses its
 * JSON log lines, waits for log events and exit with bounded time, and kills it at cleanup.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/shared.js';

export const MAIN_JS = join(REPO_ROOT, 'dist', 'main.js');

/**
 * Builds the simulator package and the exporter (`npm run build`) when an output is missing or
 * older than a source, by the check `npm start` makes (scripts/build-if-stale.mjs). A fresh build
 * is left alone, its build info too: other test files may be reading it.
 */
export function ensureBuilt(): void {
  const script = join(REPO_ROOT, 'scripts', 'build-if-stale.mjs');
  const run = (args: readonly string[]) => {
    const result = spawnSync(process.execPath, [script, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 180_000 });
    if (result.status !== 0) throw new Error(`the build failed:\n${result.stdout}${result.stderr}`);
    return result.stdout.trim();
  };
  if (run(['--check']) === 'stale') run([]);
}

export type LogLine = Record<string, unknown> & { msg?: string };

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const running = new Set<ExporterProcess>();

export class ExporterProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private readonly waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];

  constructor(args: readonly string[], env: Readonly<Record<string, string | undefined>> = {}) {
    const fullEnv: Record<string, string | undefined> = { ...process.env, FLUSSONIC_EXPORTER_CONFIG: undefined, ...env };
    for (const key of Object.keys(fullEnv)) if (fullEnv[key] === undefined) delete fullEnv[key];
    this.child = spawn(process.execPath, [MAIN_JS, ...args], { cwd: REPO_ROOT, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(this);
    let partial = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop()!;
      for (const text of lines) this.onLine(text);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        running.delete(this);
        resolve({ code, signal });
      });
    });
  }

  /** Every JSON log line written so far. */
  get logs(): LogLine[] {
    return this.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
  }

  private onLine(text: string): void {
    if (!text.startsWith('{')) return;
    const line = JSON.parse(text) as LogLine;
    for (const waiter of [...this.waiters]) {
      if (waiter.match(line)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  }

  /** The first log line (already written or to come) matching, or an error after `timeoutMs` or at exit. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs = 15_000): Promise<LogLine> {
    const seen = this.logs.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`)), timeoutMs);
      void this.exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`exited (${exit.code ?? exit.signal}) before the log line; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`));
      });
      this.waiters.push({
        match,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  /** The first match of `pattern` in stdout (already written or to come), bounded in time. */
  async waitForOutput(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.stdout);
      if (match) return match;
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`exited before printing ${pattern}; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`${pattern} not printed within ${timeoutMs} ms; stdout:\n${this.stdout}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        this.child.stdout!.once('data', done).once('end', done);
      });
    }
  }

  /** The base URL once the exporter logged that it listens. */
  async baseUrl(): Promise<string> {
    const line = await this.waitForLog((l) => l.msg === 'listening');
    const address = line.address as { address: string; port: number };
    const host = address.address.includes(':') ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** The exit, or an error when the process is still running after `timeoutMs`. */
  exitWithin(timeoutMs: number): Promise<Exit> {
    return Promise.race([
      this.exited,
      new Promise<Exit>((_, reject) => setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
  }
}

/** Kills every child still running (test cleanup). */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map((p) => {
      p.child.kill('SIGKILL');
      return p.exited;
    }),
  );
}

/** Runs to completion (for the short commands: --version, --check-config). */
export async function runToExit(args: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): Promise<Exit & { stdout: string; stderr: string }> {
  const p = new ExporterProcess(args, env);
  const exit = await p.exitWithin(15_000);
  return { ...exit, stdout: p.stdout, stderr: p.stderr };
}
