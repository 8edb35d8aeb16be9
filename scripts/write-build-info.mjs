// Writes dist/build-info.json: the git commit and branch the build was made from (`unknown`
// outside git, or when git is not installed), who built it and when (UTC; SOURCE_DATE_EPOCH, when
// set, for a reproducible build). Read by src/version.ts for flussonic_exporter_build_info{revision}
// and `--version` (Prometheus' form).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function git(args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    // Not a git checkout (a tarball, a Docker build without .git).
    return '';
  }
}

const head = git(['rev-parse', 'HEAD']);
const revision = /^[0-9a-f]{40}$/.test(head) ? head : 'unknown';
// `HEAD` on a detached checkout, as Prometheus' own builds say.
const name = revision === 'unknown' ? '' : git(['rev-parse', '--abbrev-ref', 'HEAD']);
const branch = /^[\w./-]{1,200}$/.test(name) ? name : 'unknown';

let user = 'unknown';
try {
  user = `${userInfo().username}@${hostname()}`;
} catch {
  // No user entry for this uid (some containers).
}
const epoch = Number(process.env.SOURCE_DATE_EPOCH);
const date = Number.isInteger(epoch) && epoch > 0 ? new Date(epoch * 1000) : new Date();
// Prometheus' form: 20240619-07:39:12.
const buildDate = date.toISOString().replace(/^(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d).*$/, '$1$2$3-$4');

mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'build-info.json'), `${JSON.stringify({ revision, branch, buildUser: user, buildDate })}\n`);
