/**
 * Google errors as gRPC statuses. The REST answers and the gRPC ones are one mapping read two ways: a
 * GoogleApiError's status name (google.rpc.Code) is the gRPC code, so a call refused 403 PERMISSION_DENIED
 * over REST is refused with code 7 over gRPC, with the same message. Each status carries a
 * google.rpc.ErrorInfo detail (reason = the code's name, domain = this gateway), as Google's services attach one,
 * and an INVALID_ARGUMENT that names request fields a google.rpc.BadRequest (GoogleApiError.badRequest).
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { GoogleApiError, type GoogleStatus } from '../google-errors.js';
import { messageType } from './services.js';

const CODES: Readonly<Record<GoogleStatus, Code>> = {
  INVALID_ARGUMENT: Code.InvalidArgument,
  FAILED_PRECONDITION: Code.FailedPrecondition,
  OUT_OF_RANGE: Code.OutOfRange,
  UNAUTHENTICATED: Code.Unauthenticated,
  PERMISSION_DENIED: Code.PermissionDenied,
  NOT_FOUND: Code.NotFound,
  ABORTED: Code.Aborted,
  ALREADY_EXISTS: Code.AlreadyExists,
  RESOURCE_EXHAUSTED: Code.ResourceExhausted,
  CANCELLED: Code.Canceled,
  UNKNOWN: Code.Unknown,
  INTERNAL: Code.Internal,
  DATA_LOSS: Code.DataLoss,
  UNIMPLEMENTED: Code.Unimplemented,
  UNAVAILABLE: Code.Unavailable,
  DEADLINE_EXCEEDED: Code.DeadlineExceeded,
};

export const ERROR_DOMAIN = 'endpoint-operator.dev';

const ErrorInfo = messageType('google.rpc.ErrorInfo');
const BadRequest = messageType('google.rpc.BadRequest');

export function grpcCode(status: GoogleStatus): Code {
  return CODES[status];
}

export function toConnectError(error: GoogleApiError): ConnectError {
  const info = create(ErrorInfo, { reason: error.status, domain: ERROR_DOMAIN });
  const details = [{ desc: ErrorInfo, value: info }];
  if (error.fieldViolations.length > 0)
    details.push({
      desc: BadRequest,
      value: create(BadRequest, { fieldViolations: error.fieldViolations.map((v) => ({ ...v })) }),
    });
  return new ConnectError(error.message, grpcCode(error.status), undefined, details);
}

const STATUS_OF_HTTP: Readonly<Record<number, GoogleStatus>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'RESOURCE_EXHAUSTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The Google error a REST answer of `status` carries: its own `error.status` when it is Google's JSON error form. */
export function errorOfAnswer(status: number, body: Buffer | string): GoogleApiError {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  try {
    const parsed = JSON.parse(text) as { error?: { status?: unknown; message?: unknown } };
    const named = parsed.error?.status;
    if (typeof named === 'string' && named in CODES && typeof parsed.error?.message === 'string')
      return new GoogleApiError(named as GoogleStatus, parsed.error.message, status);
  } catch {
    // Not Google's error form: a model server's own answer (rawPredict), quoted below.
  }
  const fallback = STATUS_OF_HTTP[status] ?? (status >= 500 ? 'INTERNAL' : 'UNKNOWN');
  const quoted = text.length > 1024 ? `${text.slice(0, 1024)}…` : text;
  return new GoogleApiError(fallback, `the model server answered ${status}: ${quoted}`, status);
}
