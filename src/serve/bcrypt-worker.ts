/**
 * The bcrypt thread's entry (bcrypt-thread.ts starts it): compares one password at a time, in the
 * order they arrive, and answers each by its id. Nothing else runs here.
 */
import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import type { BcryptReply, BcryptRequest } from './bcrypt-thread.js';

const port = parentPort;
if (!port) throw new Error('bcrypt-worker.js runs as a worker thread (started by bcrypt-thread.js)');
port.on('message', (request: BcryptRequest) => {
  let reply: BcryptReply;
  try {
    reply = { id: request.id, ok: bcrypt.compareSync(request.password, request.hash), failed: false };
  } catch {
    reply = { id: request.id, ok: false, failed: true };
  }
  port.postMessage(reply);
});
