import { gzipSync } from 'node:zlib';
import { CATALOGUE, type FamilyDef } from './catalogue.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The upstream-derived samples of one target (server or catena) from its last good poll. */
export type TargetChunks = ReadonlyMap<string, string>;

/**
 * The exposition of all upstream series, assembled once per snapshot swap and served from memory.
 * Each target's poll hands over its rendered family chunks; the text is rebuilt family by family
 * in catalogue order so that one family's series from all targets stay together under one
 * HELP/TYPE, and gzipped once. Self-metrics are appended per scrape by the HTTP layer (they are
 * small); a gzip response is this cached gzip followed by a second gzip member for them.
 */
export class ExpositionCache {
  private readonly targets = new Map<string, TargetChunks>();
  private text = '';
  private gzipped: Buffer = gzipSync('');
  private version = 0;

  constructor(private readonly families: readonly FamilyDef[] = CATALOGUE) {}

  /** Swaps in the chunks of one target (replacing what it had) and rebuilds the exposition. */
  swap(target: string, chunks: TargetChunks): void {
    this.targets.set(target, chunks);
    this.rebuild();
  }

  /** Withdraws every upstream series of a target (its poll failed, or it left the config). */
  withdraw(target: string): void {
    if (this.targets.delete(target)) this.rebuild();
  }

  /** Keeps only the named targets (after a config reload). */
  retain(targets: ReadonlySet<string>): void {
    let changed = false;
    for (const name of [...this.targets.keys()]) {
      if (!targets.has(name)) {
        this.targets.delete(name);
        changed = true;
      }
    }
    if (changed) this.rebuild();
  }

  get current(): { readonly text: string; readonly gzip: Buffer; readonly version: number } {
    return { text: this.text, gzip: this.gzipped, version: this.version };
  }

  private rebuild(): void {
    const parts: string[] = [];
    for (const def of this.families) {
      let header = false;
      for (const chunks of this.targets.values()) {
        const body = chunks.get(def.name);
        if (!body) continue;
        if (!header) {
          parts.push(familyHeader(def));
          header = true;
        }
        parts.push(body);
      }
    }
    this.text = parts.join('');
    this.gzipped = gzipSync(this.text);
    this.version++;
  }
}

export function familyHeader(def: FamilyDef): string {
  return `# HELP ${def.name} ${escapeHelp(def.help)}\n# TYPE ${def.name} ${def.type}\n`;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}
