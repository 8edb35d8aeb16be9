/** The `events:` settings and the per-server secret, as the config file gives them. */
import { describe, expect, test } from 'vitest';
import { MAX_NAME_LENGTH } from '../../src/config/bounds.js';
import { parseConfigText } from '../../src/config/load.js';

const parse = (text: string, env: Record<string, string> = {}) => parseConfigText(text, { source: 'config.yaml', baseDir: '/tmp', env });

describe('events settings', () => {
  test('off by default: no events in the validated config', () => {
    expect(parse('servers: [{name: edge-1, url: "http://f:80"}]\n').events).toBeUndefined();
  });

  test('on: defaults, the secret from the environment and a template\'s secret for discovered servers', () => {
    const config = parse(
      ['events: {enabled: true, families: {push_blocked: true}}', 'servers: [{name: edge-1, url: "http://f:80", events_secret: "${SINK}"}]', 'templates: {edge: {events_secret: shared-one}}'].join('\n'),
      { SINK: 'from-env' },
    );
    expect(config.events).toMatchObject({ enabled: true, maxBodyBytes: 4 * 1024 * 1024, maxEventsPerBatch: 10_000, dedupWindow: 65_536, register: false, families: { push_blocked: true, stream_closed: false } });
    expect(config.servers[0]!.eventsSecret).toBe('from-env');
    expect(config.templates!.get('edge')!.eventsSecret).toBe('shared-one');
  });

  test('register needs public_url; both ways of one secret are refused; errors name the path', () => {
    expect(() => parse('events: {enabled: true, register: true}\n')).toThrow(/events\.public_url: required with register: true/);
    expect(() => parse('servers: [{name: e, url: "http://f:80", events_secret: a, events_secret_file: b}]\n')).toThrow(/set either events_secret or events_secret_file/);
    expect(() => parse('events: {max_events_per_batch: 0}\n')).toThrow(/events\.max_events_per_batch: must be between 1 and/);
  });

  test('a server name is bounded by MAX_NAME_LENGTH, the length the event route takes (src/serve/app.ts)', () => {
    const longest = 'n'.repeat(MAX_NAME_LENGTH);
    expect(parse(`servers: [{name: ${longest}, url: "http://f:80"}]\n`).servers[0]!.name).toBe(longest);
    expect(() => parse(`servers: [{name: ${longest}n, url: "http://f:80"}]\n`)).toThrow(new RegExp(`must be at most ${MAX_NAME_LENGTH} characters`));
  });
});
