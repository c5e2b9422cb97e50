import { isRecord } from '../api/common/kube-object.js';

/**
 * A failed API request. `reason` is the meta/v1 Status reason the server sent (`Conflict`,
 * `NotFound`, `AlreadyExists`, `Expired`, `Gone`, `Invalid`, `Forbidden`, ...), or a reason
 * derived from the HTTP code when the body is not a Status (a proxy, a timeout).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly body: unknown,
    readonly warnings: string[] = [],
  ) {
    super(message);
  }

  /** Builds the error from a response status and its (already parsed, possibly non-JSON) body. */
  static fromResponse(method: string, path: string, status: number, body: unknown, warnings: string[]): ApiError {
    let reason = reasonForHttpStatus(status);
    let detail = typeof body === 'string' ? body.slice(0, 500) : '';
    if (isRecord(body)) {
      if (typeof body.reason === 'string' && body.reason !== '') reason = body.reason;
      if (typeof body.message === 'string') detail = body.message;
    }
    return new ApiError(
      status,
      reason,
      `${method} ${path}: ${status} ${reason}${detail ? `: ${detail}` : ''}`,
      body,
      warnings,
    );
  }
}

/** The reason apimachinery would attach to a bare HTTP status (k8s.io/apimachinery/pkg/api/errors). */
export function reasonForHttpStatus(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return status >= 500 ? 'InternalError' : 'Unknown';
  }
}

export function isApiError(e: unknown, reason?: string): e is ApiError {
  return e instanceof ApiError && (reason === undefined || e.reason === reason);
}

export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.status === 409 && e.reason === 'Conflict';
export const isAlreadyExists = (e: unknown): boolean => e instanceof ApiError && e.reason === 'AlreadyExists';
export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.status === 404;
/** 410 Gone / reason Expired: the resourceVersion a list or watch asked for was compacted away; relist. */
export const isExpired = (e: unknown): boolean =>
  e instanceof ApiError && (e.status === 410 || e.reason === 'Expired' || e.reason === 'Gone');

/** A short label for metrics and logs: the API reason, or the error's class name. */
export function errorKind(e: unknown): string {
  if (e instanceof ApiError) return e.reason;
  if (e instanceof Error) return e.name || 'Error';
  return typeof e;
}
