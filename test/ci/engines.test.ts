/**
 * `npm ci` on the Node releases we support prints no EBADENGINE: every locked package accepts the
 * Node running the tests, and every production package (what a user installs) accepts the lowest
 * Node 20 they all share. semver is the one npm uses (a dependency of fastify, hoisted).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

interface Locked {
  readonly version?: string;
  readonly dev?: boolean;
  readonly engines?: { readonly node?: string };
}
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Locked> };
const locked = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/') || path.includes('/node_modules/'));

/** The lowest Node 20 every production dependency accepts (undici asks for 20.18.1). */
const NODE_20_FLOOR = '20.18.1';

function refusing(version: string, production: boolean): string[] {
  return locked
    .filter(([, p]) => (!production || !p.dev) && p.engines?.node !== undefined && !semver.satisfies(version, p.engines.node))
    .map(([path, p]) => `${path}@${p.version ?? '?'} wants node ${p.engines!.node}`);
}

describe('engines of the locked packages', () => {
  it('accepts the Node running the tests', () => {
    expect(refusing(process.versions.node, false)).toEqual([]);
  });

  it(`accepts Node ${NODE_20_FLOOR} for every production package`, () => {
    expect(refusing(NODE_20_FLOOR, true)).toEqual([]);
  });
});
