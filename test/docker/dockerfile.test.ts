/**
 * The Dockerfile's promises that can be checked without a Docker daemon: the health check
 * command really works with node's fetch, the user is not root, the port and config path.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT } from '../helpers/shared.js';

const DOCKERFILE = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const finalStage = DOCKERFILE.slice(DOCKERFILE.lastIndexOf('\nFROM '));

/** The exec-form command of the HEALTHCHECK instruction (continuation lines joined). */
function healthcheckCommand(): string[] {
  const joined = DOCKERFILE.replace(/\\\n/g, ' ');
  const match = /^HEALTHCHECK .*?CMD (\[.*\])\s*$/m.exec(joined);
  if (!match) throw new Error('no exec-form HEALTHCHECK in the Dockerfile');
  return JSON.parse(match[1]!) as string[];
}

function run(command: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: 'ignore', timeout: 15_000 });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

describe('Dockerfile health check', () => {
  let healthy = true;
  let status = 200;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.statusCode = req.url === '/-/healthy' && healthy ? status : 503;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/-/healthy`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('probes /-/healthy with node and no curl', () => {
    const command = healthcheckCommand();
    expect(command[0]).toBe('node');
    expect(command.join(' ')).toContain("'http://127.0.0.1:9228/-/healthy'");
    expect(DOCKERFILE.split('\n').filter((l) => !l.startsWith('#')).join('\n')).not.toMatch(/curl|wget/);
  });

  test('exits 0 while healthy and 1 when not', async () => {
    const command = healthcheckCommand();
    healthy = true;
    expect(await run(command, { HEALTHCHECK_URL: url })).toBe(0);
    healthy = false;
    expect(await run(command, { HEALTHCHECK_URL: url })).toBe(1);
    // Basic auth from --web.config.file answers 401: the process serves, so it is healthy.
    healthy = true;
    status = 401;
    expect(await run(command, { HEALTHCHECK_URL: url })).toBe(0);
    status = 200;
  });

  test('exits 1 when nothing listens', async () => {
    expect(await run(healthcheckCommand(), { HEALTHCHECK_URL: 'http://127.0.0.1:1/-/healthy' })).toBe(1);
  });
});

describe('Dockerfile image', () => {
  test('is multi-stage with production dependencies only in the final image', () => {
    expect(DOCKERFILE.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2);
    expect(DOCKERFILE).toMatch(/npm ci --omit=dev/);
    expect(finalStage).not.toMatch(/npm ci(?! --omit=dev)/);
  });

  test('runs as a non-root user, exposes 9228, reads /etc/flussonic-exporter/config.yaml', () => {
    const user = /^USER (\S+)/m.exec(finalStage)?.[1];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(finalStage).toMatch(/^EXPOSE 9228$/m);
    expect(finalStage).toContain('FLUSSONIC_EXPORTER_CONFIG=/etc/flussonic-exporter/config.yaml');
  });
});
