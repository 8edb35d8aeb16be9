/**
 * undici's HTTP parser (llhttp, WebAssembly) stays on V8's baseline compiler once the exporter
 * has an upstream client (src/upstream/wasm-tier.ts): its optimizing recompile costs tens of MB of
 * malloc'd memory that glibc keeps. V8 gives no API to read its flags, so a child process run
 * with `--allow-natives-syntax` runs a small WebAssembly loop hot and asks V8 which tier runs it:
 * without an UpstreamHttp it reaches TurboFan (the probe works on this Node), after one has made a
 * real request on loopback it must still be Liftoff code.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/exporter-process.js';
import { REPO_ROOT } from '../helpers/shared.js';

const HTTP_JS = pathToFileURL(join(REPO_ROOT, 'dist', 'upstream', 'http.js')).href;

/** The child: optionally one UpstreamHttp GET on loopback, then the probe; prints the tiers as JSON. */
const CHILD = `
import { createServer } from 'node:http';
if (process.argv[1] === 'exporter') {
  const { UpstreamHttp } = await import(${JSON.stringify(HTTP_JS)});
  const server = createServer((req, res) => res.setHeader('content-type', 'application/json').end('{"ok":true}'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stats = { request() {}, error() {}, responseBytes() {} };
  const http = new UpstreamHttp({ target: 't', baseUrl: 'http://127.0.0.1:' + server.address().port, credentialHint: 'none', timeoutMs: 5000, maxResponseBytes: 1 << 20, stats });
  const body = await http.getJson('/ok', '/ok', undefined, AbortSignal.timeout(5000));
  if (body.ok !== true) throw new Error('the request failed');
  await http.close();
  server.close();
}
// (func (param i32) (result i32)): the sum n + (n-1) + ... + 1, a loop V8 tiers up when hot.
const bytes = new Uint8Array([0,97,115,109,1,0,0,0, 1,6,1,96,1,127,1,127, 3,2,1,0, 7,5,1,1,102,0,0,
  10,27,1,25, 1,1,127, 3,64, 32,1,32,0,106,33,1, 32,0,65,1,107,34,0, 13,0, 11, 32,1, 11]);
const f = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f;
if (f(1000) !== 500500) throw new Error('the probe computed a wrong sum');
let turbofan = false;
for (let i = 0; i < 400 && !turbofan; i++) {
  f(100000);
  await new Promise((resolve) => setTimeout(resolve, 5));
  turbofan = %IsTurboFanFunction(f);
}
console.log(JSON.stringify({ liftoff: %IsLiftoffFunction(f), turbofan }));
`;

function tiersIn(mode: 'plain' | 'exporter'): { liftoff: boolean; turbofan: boolean } {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', CHILD, mode], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  return JSON.parse(out.trim().split('\n').pop()!) as { liftoff: boolean; turbofan: boolean };
}

describe('WebAssembly tier of the HTTP parser', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  it('a plain process tiers a hot WebAssembly function up to TurboFan (the probe works here)', () => {
    expect(tiersIn('plain')).toEqual({ liftoff: false, turbofan: true });
  }, 30_000);

  it('once an UpstreamHttp has made a request, WebAssembly stays on Liftoff', () => {
    expect(tiersIn('exporter')).toEqual({ liftoff: true, turbofan: false });
  }, 30_000);
});
