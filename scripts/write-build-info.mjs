// Writes dist/build-info.json: the git commit the build was made from (`unknown` outside git, or
// when git is not installed), read by src/version.ts for flussonic_exporter_build_info{revision}.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let revision = 'unknown';
try {
  const out = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  if (/^[0-9a-f]{40}$/.test(out)) revision = out;
} catch {
  // Not a git checkout (a tarball, a Docker build without .git): the revision is unknown.
}
mkdirSync(join(root, 'dist'), { recursive: true });
writeFileSync(join(root, 'dist', 'build-info.json'), `${JSON.stringify({ revision })}\n`);
