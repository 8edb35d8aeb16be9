/**
 * Fault injection per endpoint, switchable while the simulator runs: what an exporter must
 * survive from a real server or the network in between.
 */

export type FaultEndpoint = '/streams' | '/sessions' | '/config/stats' | '/dvrs' | '/cluster/peers' | '/operations' | '/schema' | '*';
export const FAULT_ENDPOINTS: readonly FaultEndpoint[] = ['/streams', '/sessions', '/config/stats', '/dvrs', '/cluster/peers', '/operations', '/schema', '*'];

export interface Fault {
  /** Delay every answer by this many (real) milliseconds. */
  latencyMs?: number;
  /** Share (0..1) of requests answered with a 5xx (500, 502 or 503). */
  errorRate?: number;
  /** Always answer with this HTTP status (and an error body). */
  status?: number;
  /** Answer 200 with a body that is not valid JSON. */
  malformedJson?: boolean;
  /** Announce the full Content-Length, send half of the body, then drop the connection. */
  truncateBody?: boolean;
  /** Never answer (until the client gives up or the simulator closes). */
  hang?: boolean;
  /** Collections: `next` repeats the cursor the request came with, so a naive walk never ends. */
  repeatCursor?: boolean;
  /** Pad the JSON with whitespace (chunked, no Content-Length) to at least this many bytes. */
  oversizedBytes?: number;
  /** Answer 401 whatever the credentials. */
  authReject?: boolean;
  /**
   * Collections: the other faults hit only continuation pages (requests carrying `cursor=`), so
   * the first page is served normally and a walk fails part-way through.
   */
  afterFirstPage?: boolean;
}

const FAULT_KEYS: readonly (keyof Fault)[] = ['latencyMs', 'errorRate', 'status', 'malformedJson', 'truncateBody', 'hang', 'repeatCursor', 'oversizedBytes', 'authReject', 'afterFirstPage'];

export function validateFault(fault: Fault): void {
  for (const key of Object.keys(fault)) {
    if (!FAULT_KEYS.includes(key as keyof Fault)) throw new TypeError(`unknown fault ${JSON.stringify(key)}; known: ${FAULT_KEYS.join(', ')}`);
  }
  const nonNegative = (k: 'latencyMs' | 'oversizedBytes') => {
    const v = fault[k];
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new TypeError(`fault ${k} must be a number >= 0, got ${v}`);
  };
  nonNegative('latencyMs');
  nonNegative('oversizedBytes');
  if (fault.errorRate !== undefined && !(fault.errorRate >= 0 && fault.errorRate <= 1)) throw new TypeError(`fault errorRate must be within 0..1, got ${fault.errorRate}`);
  if (fault.status !== undefined && !(Number.isInteger(fault.status) && fault.status >= 100 && fault.status <= 599)) throw new TypeError(`fault status must be an HTTP status, got ${fault.status}`);
}

export class FaultController {
  private readonly faults = new Map<FaultEndpoint, Fault>();

  /** Set (replace) the fault of an endpoint; `*` applies to every endpoint without its own. */
  set(endpoint: FaultEndpoint, fault: Fault): void {
    if (!FAULT_ENDPOINTS.includes(endpoint)) throw new TypeError(`unknown endpoint ${JSON.stringify(endpoint)}; known: ${FAULT_ENDPOINTS.join(' ')}`);
    validateFault(fault);
    this.faults.set(endpoint, { ...fault });
  }

  /** Clear one endpoint's fault, or all. */
  clear(endpoint?: FaultEndpoint): void {
    if (endpoint === undefined) this.faults.clear();
    else this.faults.delete(endpoint);
  }

  /** The fault in force for an endpoint: its own merged over `*`. */
  get(endpoint: FaultEndpoint | undefined): Fault {
    const all = this.faults.get('*');
    const own = endpoint ? this.faults.get(endpoint) : undefined;
    return { ...(all ?? {}), ...(own ?? {}) };
  }

  list(): [FaultEndpoint, Fault][] {
    return [...this.faults.entries()].map(([e, f]) => [e, { ...f }]);
  }
}

/** `latencyMs=200,errorRate=0.1,hang` -> a Fault (the CLI's --fault ENDPOINT:SPEC). */
export function parseFaultSpec(spec: string): Fault {
  const fault: Record<string, number | boolean> = {};
  for (const part of spec.split(',')) {
    if (part === '') continue;
    const [key, raw] = part.split('=', 2) as [string, string | undefined];
    if (!FAULT_KEYS.includes(key as keyof Fault)) throw new TypeError(`unknown fault ${JSON.stringify(key)}; known: ${FAULT_KEYS.join(', ')}`);
    if (raw === undefined || raw === 'true') fault[key] = true;
    else if (raw === 'false') fault[key] = false;
    else {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new TypeError(`fault ${key}: not a number: ${JSON.stringify(raw)}`);
      fault[key] = n;
    }
  }
  const typed = fault as Fault;
  for (const k of ['malformedJson', 'truncateBody', 'hang', 'repeatCursor', 'authReject', 'afterFirstPage'] as const) {
    if (typed[k] !== undefined && typeof typed[k] !== 'boolean') throw new TypeError(`fault ${k} takes no value`);
  }
  for (const k of ['latencyMs', 'errorRate', 'status', 'oversizedBytes'] as const) {
    if (typed[k] !== undefined && typeof typed[k] !== 'number') throw new TypeError(`fault ${k} needs a number (${k}=...)`);
  }
  validateFault(typed);
  return typed;
}
