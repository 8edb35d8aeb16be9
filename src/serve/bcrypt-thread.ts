/**
 * bcrypt comparisons off the serving thread: one worker thread (bcrypt-worker.ts) that compares
 * one password at a time with bcryptjs, started on the first comparison and ended with close().
 * A comparison at cost 10 takes 60-300 ms of CPU; on the serving thread every request, scrapes
 * of cached credentials too, waited behind it. The queue in front of it is the checker's
 * (basic-auth.ts): this thread only ever has the comparisons the checker lets through.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker-thread.js';
import { entryScript } from '../thread-entries.js';

/** To the bcrypt thread: compare `password` with the bcrypt `hash`. */
export interface BcryptRequest {
  readonly id: number;
  readonly password: string;
  readonly hash: string;
}

/** From the bcrypt thread: whether they matched; `failed` when bcryptjs threw (a malformed hash). */
export interface BcryptReply {
  readonly id: number;
  readonly ok: boolean;
  readonly failed: boolean;
}

/** What compares a password with a bcrypt hash (a thread, or this thread in tests of the queue). */
export interface BcryptRunner {
  compare(password: string, hash: string): Promise<boolean>;
  close(): Promise<void>;
}

interface Waiting {
  resolve(ok: boolean): void;
  reject(error: Error): void;
}

export class BcryptThread implements BcryptRunner {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly entry: URL = entryScript('bcrypt')) {}

  compare(password: string, hash: string): Promise<boolean> {
    const worker = (this.worker ??= this.spawn());
    const id = this.nextId++;
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Keeps the process alive only while a comparison is under way.
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage({ id, password, hash } satisfies BcryptRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new Error('the bcrypt thread was closed'));
    if (worker) await worker.terminate();
  }

  private spawn(): Worker {
    // bcryptjs needs a few MB; the limits keep a stray thread small.
    const worker = startWorker(this.entry, { name: 'flussonic-exporter bcrypt', resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 } });
    worker.unref();
    worker.on('message', (reply: BcryptReply) => {
      const waiting = this.waiting.get(reply.id);
      if (!waiting) return;
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if (reply.failed) waiting.reject(new Error('bcrypt comparison failed'));
      else waiting.resolve(reply.ok);
    });
    const gone = (reason: string): void => {
      // The next comparison starts a new thread.
      if (this.worker === worker) this.worker = undefined;
      this.failAll(new Error(reason));
    };
    worker.on('error', (error) => gone(`the bcrypt thread failed: ${error.message}`));
    worker.on('exit', (code) => gone(`the bcrypt thread exited with code ${code}`));
    return worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(error);
  }
}
