/**
 * undici parses HTTP responses with llhttp compiled to WebAssembly. V8 runs it first as Liftoff
 * code (its baseline WebAssembly compiler) and, once it is hot, compiles it again with TurboFan.
 * That one compile of llhttp's large parser function allocates about 38 MB of compiler zones from
 * malloc for a moment, during the first poll; glibc keeps much of it resident afterwards (freed
 * blocks below live ones cannot be given back): with TurboFan the steady RSS of a 10,000-stream
 * run varies by 10-20 MB from run to run, with Liftoff it does not. llhttp is under 1%
 * of a poll's CPU on either tier, so the exporter keeps it on Liftoff.
 *
 * Both flags are needed on every Node we support (20, 22, 24): without dynamic tiering V8 tiers up
 * every function at once unless tier-up is off, and `--liftoff-only` set at run time is ignored
 * by Node 24. The flags are process-wide and read when a module is compiled, so this runs before
 * the first undici pool of the process exists; undici compiles llhttp at its first connection.
 */
import { setFlagsFromString } from 'node:v8';

let kept = false;

export function keepWasmOnBaselineTier(): void {
  if (kept) return;
  kept = true;
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}
