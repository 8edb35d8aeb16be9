/**
 * The gzip floor of the instruction phase (bench/instructions.ts), in a process of its own: the
 * exporter's exposition, read once from a file, compressed each time it is asked with the
 * exporter's own code (prepareSources(): a family at a time into the render buffer, deflated
 * whenever 256 KiB have been written by the end of a line, deflate level 1, CRC, the pieces of a
 * family joined). That is what serving this output gzip'd costs on top of fetching and parsing,
 * however cheaply the samples were collected and written.
 */
import { readFileSync } from 'node:fs';
import { prepareSources } from '../src/render/prepare.js';
import { answerRequests } from './child-io.js';

export type GzipFloorRequest = { readonly type: 'hold'; readonly file: string } | { readonly type: 'deflate' } | { readonly type: 'exit' };

export interface HeldText {
  /** Bytes of sample lines held. */
  readonly bytes: number;
}

let held: Map<string, Uint8Array[]> | undefined;

/**
 * Lines are handed to the render buffer in runs of about this many bytes, each ending a line, so
 * that it spills (deflates a piece) where the exporter's would: at the first line end past 256 KiB.
 */
const RUN_BYTES = 2048;

/**
 * The sample lines of each family, as views of `text` in runs of whole lines (a family's lines
 * follow its `# HELP` and `# TYPE`; the comment lines themselves are left out, as the exporter
 * deflates them apart).
 */
function samplesByFamily(text: Uint8Array): Map<string, Uint8Array[]> {
  const families = new Map<string, Uint8Array[]>();
  let family: Uint8Array[] | undefined;
  let samplesAt = -1;
  const close = (end: number) => {
    if (family && samplesAt >= 0 && end > samplesAt) family.push(text.subarray(samplesAt, end));
    samplesAt = -1;
  };
  for (let at = 0; at < text.length; ) {
    let end = text.indexOf(0x0a, at);
    end = end < 0 ? text.length : end + 1;
    if (text[at] === 0x23) {
      // '#': HELP opens a family; TYPE and other comments only end a run of samples.
      close(at);
      const line = Buffer.from(text.buffer, text.byteOffset + at, end - at).toString('latin1');
      const help = /^# HELP (\S+)/.exec(line);
      if (help) {
        family = [];
        families.set(help[1]!, family);
      }
    } else {
      if (samplesAt < 0) samplesAt = at;
      if (end - samplesAt >= RUN_BYTES) close(end);
    }
    at = end;
  }
  close(text.length);
  return families;
}

async function handle(message: GzipFloorRequest): Promise<unknown> {
  switch (message.type) {
    case 'hold': {
      held = samplesByFamily(readFileSync(message.file));
      let bytes = 0;
      for (const runs of held.values()) for (const run of runs) bytes += run.length;
      return { bytes } satisfies HeldText;
    }
    case 'deflate': {
      if (!held) throw new Error('no text held');
      const families = held;
      const prepared = prepareSources([
        {
          familyNames: () => families.keys(),
          renderFamily: (name, into) => {
            for (const run of families.get(name)!) {
              into.bytes(run);
              into.endLine();
            }
          },
        },
      ]);
      let deflated = 0;
      for (const piece of prepared.values()) deflated += piece.deflated.length;
      return { deflated };
    }
    case 'exit':
      setImmediate(() => process.exit(0));
      return { ok: true };
  }
}

answerRequests(handle);
