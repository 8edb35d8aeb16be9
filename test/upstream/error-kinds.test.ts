/**
 * The table of error kinds: each kind says its reason label, what was expected and its message;
 * the errors made from it carry the kind, the place, the details and the cause, and the reason
 * labels exported from the start are exactly those of the table, in the order they always had.
 */
import { describe, expect, test } from 'vitest';
import { API_ERROR_REASONS, configError, ERROR_KINDS, ExporterError, isConfigError, isErrorKind, isUpstreamError, upstreamError } from '../../src/lib/errors.js';

describe('error kinds', () => {
  test('the reason labels are the ones flussonic_exporter_api_errors_total has always had, in their order', () => {
    expect(API_ERROR_REASONS).toEqual(['timeout', 'connection', 'http', 'invalid_json', 'too_large', 'cursor_loop', 'auth', 'shape']);
  });

  test('an upstream error says where, the message of its row, what was expected, and keeps its cause', () => {
    const cause = new Error('socket hang up');
    const e = upstreamError('http_status', { target: 'edge-1', endpoint: '/streams' }, { status: 502 }, { cause });
    expect(e).toBeInstanceOf(ExporterError);
    expect([e.kind, e.reason, e.target, e.endpoint, e.status, e.expected]).toEqual(['http_status', 'http', 'edge-1', '/streams', 502, ERROR_KINDS.http_status.expected]);
    expect(e.message).toBe('edge-1 /streams: HTTP 502, expected 2xx');
    expect(e.cause).toBe(cause);
    expect(isUpstreamError(e) && !isConfigError(e) && isErrorKind(e, 'http_status', 'auth_refused') && !isErrorKind(e, 'auth_refused')).toBe(true);
  });

  test('a config error lists its problems after the source and is not an upstream error', () => {
    const e = configError('c.yaml', [{ path: 'servers[0].url', message: 'required', line: 3 }, { path: '', message: 'nothing to poll' }]);
    expect(e.message).toBe('c.yaml: servers[0].url: required; nothing to poll');
    expect([e.source, e.problems.length, e.reason, isUpstreamError(e), isConfigError(e)]).toEqual(['c.yaml', 2, undefined, false, true]);
    expect(isConfigError(new Error('c.yaml: x'))).toBe(false);
  });

  test('every kind has a reason (or is the config kind), an expectation and a message', () => {
    for (const [kind, row] of Object.entries(ERROR_KINDS)) {
      expect(row.reason !== undefined || kind === 'config_invalid', kind).toBe(true);
      expect(row.expected.length, kind).toBeGreaterThan(0);
    }
  });
});
