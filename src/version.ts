/** The exporter's version: the one in package.json, read from beside src/ or dist/. */
import { readFileSync } from 'node:fs';

/** The product token of every request's User-Agent (`flussonic-exporter/<version>`). */
export const USER_AGENT_PRODUCT = 'flussonic-exporter';

/** What the build wrote of itself; each `unknown` when not known. */
export interface BuildInfo {
  /** The git commit. */
  readonly revision: string;
  readonly branch: string;
  /** `user@host` that built it. */
  readonly buildUser: string;
  /** UTC, `20240619-07:39:12` (Prometheus' form). */
  readonly buildDate: string;
}

const FIELD_FORMS: Readonly<Record<keyof BuildInfo, RegExp>> = {
  revision: /^[0-9a-f]{7,40}$/,
  branch: /^[\w./-]{1,200}$/,
  buildUser: /^[\w.@-]{1,200}$/,
  buildDate: /^\d{8}-\d\d:\d\d:\d\d$/,
};

/**
 * How and from what the build was made: `npm run build` writes dist/build-info.json
 * (scripts/write-build-info.mjs); every field `unknown` when it is absent (running from src/) and
 * the git fields when built outside a git checkout. A field of an unexpected form reads `unknown`.
 */
export function readBuildInfo(): BuildInfo {
  let info: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(new URL('./build-info.json', import.meta.url), 'utf8'));
    if (parsed !== null && typeof parsed === 'object') info = parsed as Record<string, unknown>;
  } catch {
    // Not built: every field unknown.
  }
  const field = (key: keyof BuildInfo): string => {
    const value = info[key];
    return typeof value === 'string' && FIELD_FORMS[key].test(value) ? value : 'unknown';
  };
  return { revision: field('revision'), branch: field('branch'), buildUser: field('buildUser'), buildDate: field('buildDate') };
}

/** The git commit the build was made from (`unknown` outside git or unbuilt). */
export function readRevision(): string {
  return readBuildInfo().revision;
}

/**
 * What `--version` prints, in the Prometheus exporters' form (their `go version` line is the
 * Node.js running it here):
 *
 *   flussonic-exporter, version 0.1.0 (branch: main, revision: 13b3b09...)
 *     build user:       root@host
 *     build date:       20261127-09:30:17
 *     node version:     v22.11.0
 *     platform:         linux/x64
 */
export function versionText(version: string, build: BuildInfo = readBuildInfo()): string {
  return [
    `${USER_AGENT_PRODUCT}, version ${version} (branch: ${build.branch}, revision: ${build.revision})`,
    `  build user:       ${build.buildUser}`,
    `  build date:       ${build.buildDate}`,
    `  node version:     ${process.version}`,
    `  platform:         ${process.platform}/${process.arch}`,
  ].join('\n');
}

export function readVersion(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const version = pkg !== null && typeof pkg === 'object' && 'version' in pkg ? pkg.version : undefined;
  return typeof version === 'string' ? version : '0.0.0-unknown';
}
