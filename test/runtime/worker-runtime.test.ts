/**
 * The worker side of the protocol on its own: a WorkerRuntime over a MessageChannel with a scripted
 * collector. What crosses is plain data, a poll's exposition is held until asked for and then its
 * buffers are transferred (detached on the sending side), and a config's patterns survive the trip
 * as sources.
 */
import { MessageChannel } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { CollectorEntry } from '../../src/collect/types.js';
import { validateConfig } from '../../src/config/index.js';
import { compileStreamFilter } from '../../src/lib/name-pattern.js';
import { familyByName } from '../../src/serve/catalogue.js';
import { ExpositionCache } from '../../src/serve/exposition.js';
import { finalPiece } from '../../src/render/gzip-stream.js';
import { LabelBlockCache } from '../../src/render/label-blocks.js';
import { builtInCatenaCollectors } from '../../src/poll/targets.js';
import type { FromWorker, PollResult, ToWorker } from '../../src/threads/protocol.js';
import { WorkerRuntime, type RuntimePort } from '../../src/threads/runtime.js';
import { captureLogger, serverConfig } from '../helpers/runtime.js';

const ALIVE = familyByName('flussonic_stream_alive');
const CLIENTS = familyByName('flussonic_stream_clients');
const table: CollectorEntry[] = [
  {
    name: 'streams',
    defaultEnabled: true,
    create: () => ({
      async collect({ out }) {
        for (let i = 0; i < 50; i++) out.add(ALIVE, [`s${i}`], i % 2 === 0);
      },
    }),
  },
];

const channels: MessageChannel[] = [];
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

describe('WorkerRuntime', () => {
  it('holds a poll until asked, then answers with an exposition whose buffers were transferred, not copied', async () => {
    const channel = new MessageChannel();
    channels.push(channel);
    const sent: { message: FromWorker; detachedAfterSend: boolean }[] = [];
    // The runtime's port, recording whether the transferred buffers are gone on this side after sending.
    const port: RuntimePort = {
      postMessage(message, transfer) {
        channel.port2.postMessage(message, transfer ? [...transfer] : undefined);
        sent.push({ message, detachedAfterSend: (transfer ?? []).length > 0 && (transfer ?? []).every((b) => b.byteLength === 0) });
      },
      on: (event, listener) => channel.port2.on(event, listener),
    };
    new WorkerRuntime(port, { log: captureLogger().logger, collectorTable: table, catenaCollector: builtInCatenaCollectors(), userAgent: 'test' });
    const received: FromWorker[] = [];
    const polled = new Promise<void>((resolve) =>
      channel.port1.on('message', (m: FromWorker) => {
        received.push(m);
        if (m.type === 'polled') resolve();
      }),
    );
    const send = (m: ToWorker) => channel.port1.postMessage(m);
    send({ type: 'apply', targets: [{ id: 7, target: { kind: 'server', config: serverConfig('edge-1', 'http://127.0.0.1:9') } }] });
    send({ type: 'poll', id: 1 });
    await polled;

    const result = received.find((m): m is { type: 'result'; result: PollResult } => m.type === 'result')!.result;
    expect(result).toMatchObject({ id: 7, kind: 'server', name: 'edge-1', ok: true, keepOnFailure: false, held: expect.any(Number) });
    expect(result.collectors).toEqual([expect.objectContaining({ name: 'streams', ok: true, dropped: 0 })]);
    // Nothing was rendered or compressed for the poll itself.
    expect(received.some((m) => m.type === 'compressed')).toBe(false);

    const answer = (request: number) =>
      new Promise<Extract<FromWorker, { type: 'compressed' }>>((resolve) =>
        channel.port1.on('message', (m: FromWorker) => {
          if (m.type === 'compressed' && m.request === request) resolve(m);
        }),
      );
    const compressed = answer(1);
    send({ type: 'compress', request: 1, held: result.held! });
    const { exposition } = await compressed;
    expect(sent.find((s) => s.message.type === 'compressed')!.detachedAfterSend).toBe(true);
    // A poll is handed over once: asked again, the worker has nothing.
    const again = answer(2);
    send({ type: 'compress', request: 2, held: result.held! });
    expect((await again).exposition).toBeUndefined();
    // What arrived is a complete exposition: deflated pieces the cache can serve.
    const cache = new ExpositionCache();
    cache.swapPrepared('server/edge-1', new Map(exposition!.map((p) => [p.family, p])));
    const text = cache.current.text;
    expect(text.split('\n').filter((l) => l.startsWith('flussonic_stream_alive{'))).toHaveLength(50);
    expect(gunzipSync(Buffer.concat(cache.snapshot().gzip(finalPiece(new Uint8Array(0))))).toString('utf8')).toBe(text);
  });
});

describe('rendering a target poll after poll', () => {
  it('serves what each poll read, also once families are sent again from the last render', async () => {
    // A collector that keeps its label blocks across polls, as the streams collector does, so a
    // family whose values stay the same is sent again from the worker's memo of its last render.
    const clients = new Map<string, number>(Array.from({ length: 200 }, (_, i) => [`s${i}`, i % 5]));
    const blocks = new LabelBlockCache();
    let now = 0;
    const keeping: CollectorEntry[] = [
      {
        name: 'streams',
        defaultEnabled: true,
        create: () => ({
          async collect({ out }) {
            blocks.begin(out.constLabels, (now += 1000));
            out.useBlockCache(blocks);
            for (const [name, n] of clients) {
              out.add(ALIVE, [name], true);
              out.add(CLIENTS, [name], n);
            }
          },
        }),
      },
    ];
    const channel = new MessageChannel();
    channels.push(channel);
    const port: RuntimePort = { postMessage: (m, transfer) => channel.port2.postMessage(m, transfer ? [...transfer] : undefined), on: (e, l) => channel.port2.on(e, l) };
    new WorkerRuntime(port, { log: captureLogger().logger, collectorTable: keeping, catenaCollector: builtInCatenaCollectors(), userAgent: 'test' });
    const next = <T extends FromWorker['type']>(type: T) =>
      new Promise<Extract<FromWorker, { type: T }>>((resolve) => {
        const listener = (m: FromWorker) => {
          if (m.type !== type) return;
          channel.port1.off('message', listener);
          resolve(m as Extract<FromWorker, { type: T }>);
        };
        channel.port1.on('message', listener);
      });
    const send = (m: ToWorker) => channel.port1.postMessage(m);
    send({ type: 'apply', targets: [{ id: 7, target: { kind: 'server', config: serverConfig('edge-1', 'http://127.0.0.1:9') } }] });
    /** One poll, then its exposition as the main thread would serve it. */
    const pollAndRender = async (request: number): Promise<string> => {
      const result = next('result');
      send({ type: 'poll', id: request });
      const held = (await result).result.held!;
      const compressed = next('compressed');
      send({ type: 'compress', request, held });
      const cache = new ExpositionCache();
      cache.swapPrepared('server/edge-1', new Map((await compressed).exposition!.map((p) => [p.family, p])));
      return cache.current.text;
    };
    for (let i = 1; i <= 4; i++) expect(await pollAndRender(i)).toContain('flussonic_stream_clients{server="edge-1",stream="s7"} 2\n');
    clients.set('s7', 40);
    const changed = await pollAndRender(5);
    expect(changed).toContain('flussonic_stream_clients{server="edge-1",stream="s7"} 40\n');
    expect(changed.split('\n').filter((l) => l.startsWith('flussonic_stream_alive{'))).toHaveLength(200);
    clients.delete('s9');
    const removed = await pollAndRender(6);
    expect(removed).not.toContain('stream="s9"');
    expect(removed.split('\n').filter((l) => l.startsWith('flussonic_stream_alive{'))).toHaveLength(199);
  });
});

describe('config as data', () => {
  it('carries stream patterns as sources through a structured clone, matching as before', () => {
    const config = validateConfig(
      { servers: [{ name: 'edge-1', url: 'http://127.0.0.1:9', streams: { include: 'cam-.*|live/a', exclude: 'cam-test' } }] },
      { source: 'test', baseDir: process.cwd() },
    ).servers[0]!;
    const before = compileStreamFilter(config.streams);
    const after = compileStreamFilter(structuredClone(config).streams);
    for (const name of ['cam-1', 'cam-test', 'live/a', 'live/ab', 'x-cam-1']) expect([name, after(name)]).toEqual([name, before(name)]);
    expect(after('live/ab')).toBe(false); // still anchored
    expect(after('cam-1')).toBe(true);
  });
});
