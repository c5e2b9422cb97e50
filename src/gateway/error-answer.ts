/**
 * The gateway's one error answerer, for every request on its port (prediction pipeline, registry
 * routes, fastify's own errors, unknown paths, a duplicate Host): the failure becomes a Google JSON
 * error (google-errors.ts); a 5xx is logged once and counted (http/server-errors.ts), and answered
 * without the error's own text, which is not the caller's business: the log line with the request id is.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { userTextInMessage } from '../api/common/text.js';
import { reportServerError, type ErrorLog } from '../http/server-errors.js';
import { GoogleApiError } from './google-errors.js';

export interface ErrorContext {
  readonly log: ErrorLog;
  /** The route pattern or the call's method, never the raw URL. */
  readonly route: string;
  readonly requestId: string;
  /** The largest request body (fastify's body-limit error names it). */
  readonly bodyLimit: number;
}

/** What a failure is answered with; a 5xx is reported (logged and counted) once, here. */
export function answerFailure(err: unknown, context: ErrorContext): GoogleApiError {
  const error = toGoogleError(err, context);
  if (error.httpCode >= 500) {
    reportServerError(context.log, {
      server: 'gateway',
      route: context.route,
      requestId: context.requestId,
      status: error.httpCode,
      err,
      cause: err instanceof GoogleApiError ? err.status : undefined,
    });
  }
  return error;
}

/** The Google error a failure is answered with, unreported (a call whose caller went away is answered nothing). */
export function toGoogleError(err: unknown, context: Pick<ErrorContext, 'requestId' | 'bodyLimit'>): GoogleApiError {
  if (err instanceof GoogleApiError) return err;
  const fastifyError = err as { code?: unknown; statusCode?: unknown; message?: unknown };
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new GoogleApiError(
      'INVALID_ARGUMENT',
      `Request payload size exceeds the limit: ${context.bodyLimit} bytes.`,
      413,
    );
  // fastify's other client errors (a malformed body, an unsupported media type) keep their code and text.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && typeof fastifyError.message === 'string')
    return new GoogleApiError('INVALID_ARGUMENT', fastifyError.message, status);
  return new GoogleApiError('INTERNAL', `Internal error; request id ${context.requestId}.`);
}

/** The bytes of a Google error answer. */
export interface RenderedError {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export function renderGoogleError(error: GoogleApiError): RenderedError {
  return {
    status: error.httpCode,
    headers: { ...error.headers, 'content-type': 'application/json; charset=UTF-8' },
    body: JSON.stringify(error.body()),
  };
}

export function sendGoogleError(reply: FastifyReply, error: GoogleApiError): FastifyReply {
  const rendered = renderGoogleError(error);
  return reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
}

/** Makes the answerer `app`'s error handler (the routes of every plugin inherit it) and its answer to unknown paths. */
export function installErrorAnswerer(
  app: FastifyInstance,
  options: { readonly log: ErrorLog; readonly bodyLimit: number },
): void {
  app.setErrorHandler((err: FastifyError, request, reply) =>
    sendGoogleError(
      reply,
      answerFailure(err, {
        log: options.log,
        route: request.routeOptions.url ?? 'unrouted',
        requestId: request.id,
        bodyLimit: options.bodyLimit,
      }),
    ),
  );
  app.setNotFoundHandler((request, reply) =>
    sendGoogleError(
      reply,
      new GoogleApiError(
        'NOT_FOUND',
        `The requested URL ${request.method} ${userTextInMessage(request.url.split('?')[0] ?? '')} was not found on this server.`,
      ),
    ),
  );
}
