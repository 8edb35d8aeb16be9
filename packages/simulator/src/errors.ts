/**
 * The error structure of section 2.2 (`{"errors": [...]}`), thrown by request handlers and
 * turned into a response by the HTTP layer.
 */

export interface ApiErrorObject {
  id?: string;
  status?: string;
  code?: string;
  title?: string;
  source?: { pointer?: string; parameter?: string };
  meta?: Record<string, string | number>;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly errors: readonly ApiErrorObject[],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(errors.map((e) => e.title ?? e.code ?? String(status)).join('; '));
  }

  body(): { errors: ApiErrorObject[] } {
    return { errors: this.errors.map((e) => ({ status: String(this.status), ...e })) };
  }
}

/** 400 for a bad query parameter (`source.parameter` names it). */
export function badParameter(parameter: string, title: string, code = 'invalid_parameter'): ApiError {
  return new ApiError(400, [{ code, title, source: { parameter } }]);
}

/** 400 for a bad request body member (`source.pointer` is its RFC 6901 JSON Pointer). */
export function badPointer(pointer: string, title: string, code = 'invalid_value'): ApiErrorObject {
  return { code, title, source: { pointer } };
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, [{ code: 'not_found', title: `${what} not found`, meta: { id } }]);
}

/** RFC 6901 pointer from path segments. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
