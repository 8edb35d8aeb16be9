import { spawnSync } from 'node:child_process';

/** Absolute path of a binary on PATH, or undefined (with the reason printed) when it is missing. */
export function findBinary(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = r.status === 0 ? r.stdout.trim() : '';
  if (path) return path;
  console.warn(`skipping: ${name} is not installed (Debian package prometheus; .ci/run installs it)`);
  return undefined;
}

export interface PromtoolResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs promtool with arguments and optional standard input, bounded in time. */
export function promtool(promtoolPath: string, args: readonly string[], input?: string): PromtoolResult {
  const r = spawnSync(promtoolPath, args, { input, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
