/** A forked benchmark child (bench/*-child.ts) with one request in flight at a time. */
import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv } from './common.js';

const HERE = dirname(fileURLToPath(import.meta.url));

export class Child {
  private waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void } | undefined;
  private constructor(private readonly process: ChildProcess) {
    process.on('message', (m: { ok: boolean; result?: unknown; error?: string }) => {
      const w = this.waiting;
      this.waiting = undefined;
      if (!w) return;
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(m.error));
    });
    process.on('exit', (code) => {
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(new Error(`child exited with ${code}`));
    });
  }

  /** `execPath`: the program that runs node (a wrapper such as valgrind, given node as its first execArgv). */
  static async start(script: string, execArgv: string[] = [], execPath?: string): Promise<Child> {
    const options: ForkOptions = { execArgv, env: childEnv(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] };
    if (execPath !== undefined) options.execPath = execPath;
    const child = new Child(fork(join(HERE, script), [], options));
    await child.next();
    return child;
  }

  get pid(): number {
    return this.process.pid!;
  }

  request<T>(message: unknown): Promise<T> {
    const answer = this.next<T>();
    this.process.send(message as never);
    return answer;
  }

  private next<T>(): Promise<T> {
    if (this.waiting) throw new Error('one request at a time');
    return new Promise<T>((resolve, reject) => {
      this.waiting = { resolve: resolve as (v: unknown) => void, reject };
    });
  }

  async stop(): Promise<void> {
    if (this.process.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.send({ type: 'exit' });
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

