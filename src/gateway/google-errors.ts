/**
 * What the gateway's Google-compatible REST surfaces (Vertex AI prediction, Service Directory lookup) share:
 * errors in Google's JSON error form and the standard system query parameters. Google's official clients
 * read `error.status` (the google.rpc.Code name) to pick an exception class, so the pair (HTTP code,
 * status name) follows Google's own mapping (https://cloud.google.com/apis/design/errors#handling_errors).
 */
import { renderValue } from '../api/common/field-error.js';

/** google.rpc.Code names and the HTTP code Google's front ends answer them with. */
export const GOOGLE_HTTP_CODES = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  UNKNOWN: 500,
  INTERNAL: 500,
  DATA_LOSS: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
} as const;
export type GoogleStatus = keyof typeof GOOGLE_HTTP_CODES;

/** google.rpc.BadRequest.FieldViolation: the REQUEST's field (snake_case path, as Google names it) and why. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

/** The `@type` of google.rpc.BadRequest in a JSON error's `details` (and of the gRPC status detail). */
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    status: GoogleStatus;
    details?: { '@type': string; fieldViolations: readonly FieldViolation[] }[];
  };
}

/**
 * A failure to answer in Google's form. `httpCode` overrides the canonical code where the wire needs
 * another one with the same meaning (413 for an oversized body, 502 for a backend that answered badly).
 */
export class GoogleApiError extends Error {
  readonly httpCode: number;
  /** Headers the answer carries besides the body (`WWW-Authenticate` on a 401, RFC 6750 §3). */
  headers: Readonly<Record<string, string>> | undefined;
  /** google.rpc.BadRequest's violations (an INVALID_ARGUMENT naming request fields); empty for other errors. */
  fieldViolations: readonly FieldViolation[] = [];
  constructor(
    readonly status: GoogleStatus,
    message: string,
    httpCode?: number,
  ) {
    super(message);
    this.httpCode = httpCode ?? GOOGLE_HTTP_CODES[status];
  }

  body(): GoogleErrorBody {
    const error: GoogleErrorBody['error'] = { code: this.httpCode, message: this.message, status: this.status };
    if (this.fieldViolations.length > 0)
      error.details = [{ '@type': BAD_REQUEST_TYPE, fieldViolations: this.fieldViolations }];
    return { error };
  }

  /** INVALID_ARGUMENT with a google.rpc.BadRequest detail; the message lists every violation. */
  static badRequest(violations: readonly FieldViolation[]): GoogleApiError {
    const err = new GoogleApiError(
      'INVALID_ARGUMENT',
      `Invalid request: ${violations.map((v) => `${v.field}: ${v.description}`).join('; ')}`,
    );
    err.fieldViolations = violations;
    return err;
  }
}

/**
 * Google's standard system parameters (https://cloud.google.com/apis/docs/system-parameters), accepted
 * on every call with or without the `$` prefix. Only JSON is served: `alt=json` (the default) and
 * `alt=json;enum-encoding=int`; `alt=media` and `alt=proto` are refused as Google does for methods
 * without them. The others (`fields`, `prettyPrint`, `key`, `quotaUser`, ...) are accepted and have no
 * effect here, like unknown request fields.
 */
export function checkSystemParameters(query: unknown): GoogleApiError | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const name of ['alt', '$alt']) {
    const value = (query as Record<string, unknown>)[name];
    if (value === undefined) continue;
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (typeof v !== 'string' || !/^json(;enum-encoding=int)?$/i.test(v)) {
        return new GoogleApiError(
          'INVALID_ARGUMENT',
          `Invalid value for system parameter "${name}": ${renderValue(v)}; only "json" is served`,
        );
      }
    }
  }
  return undefined;
}
