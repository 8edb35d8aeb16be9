/**
 * .ci/run may run on an operator's machine: it must stop nothing by name.
 * The tests that start Prometheus or the exporter stop exactly the child they spawned, by pid.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
/** Commands that signal processes by name (or by pattern), not by a pid the caller owns. */
const BY_NAME = /\b(pkill|killall|pgrep|fuser\s+-k|kill\s+[^|;&\n]*\$\(\s*(pgrep|pidof))|\bpidof\b/;

function testSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testSources(join(dir, e.name)) : e.name.endsWith('.ts') && e.name !== 'ci-run.test.ts' ? [join(dir, e.name)] : [],
  );
}

describe('.ci/run', () => {
  it('stops no process by name (an operator\'s Prometheus survives CI)', () => {
    const script = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    const offending = script.split('\n').filter((line) => !line.trimStart().startsWith('#') && BY_NAME.test(line));
    expect(offending).toEqual([]);
  });

  it('keeps its closing summary line', () => {
    expect(readFileSync(join(ROOT, '.ci', 'run'), 'utf8')).toContain('Tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed');
  });

  it('the tests that spawn prometheus stop only their own child (ChildProcess.kill), never by name', () => {
    const sources = testSources(join(ROOT, 'test'));
    const spawning = sources.filter((f) => /spawn\w*\([^)]*prometheus/i.test(readFileSync(f, 'utf8')));
    expect(spawning.length).toBeGreaterThan(0);
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      expect(BY_NAME.test(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')), file).toBe(false);
      // process.kill(<number>) with a pid not from a child we spawned would be a guess too.
      expect(/process\.kill\(/.test(text), file).toBe(false);
    }
    const harness = readFileSync(join(ROOT, 'test', 'grafana', 'harness.ts'), 'utf8');
    expect(harness).toMatch(/p\.child\.kill\('SIGTERM'\)/);
  });
});
