/**
 * What a port does for every request before its API's handler, when the API asks for it (server.ts `front`):
 * - the request id (request-id.ts) goes into the answer's X-Request-Id, and is the id every log line of the
 *   request names;
 * - more than one Host header is refused (400, RFC 9112 §3.2), answered by the API's own error renderer;
 * - one access line per request, when its answer is finished or its connection gone, with whatever the handler
 *   learnt about the request (`annotate`: an admission review's uid and decision, say).
 */
import type { AnyRequest, AnyResponse } from './request-types.js';
import { DUPLICATE_HOST_MESSAGE, hasDuplicateHost, REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

/** A request the port refuses itself; the API renders the answer (its error form) and may log it. */
export interface PortRefusal {
  readonly status: 400;
  readonly reason: 'DuplicateHost';
  readonly message: string;
  readonly requestId: string;
}

export interface AccessLine {
  readonly requestId: string;
  readonly method: string;
  /** The path without its query (a query may carry what a log must not). */
  readonly path: string;
  readonly status: number;
  readonly ms: number;
  readonly httpVersion: string;
  /** False when the connection closed before the answer was complete. */
  readonly finished: boolean;
}

export interface FrontDoor {
  readonly refuse: (req: AnyRequest, res: AnyResponse, refusal: PortRefusal) => void;
  /** Writes the access line, with the handler's annotations (undefined when it made none). */
  readonly log?: (line: AccessLine, annotations: Readonly<Record<string, unknown>> | undefined) => void;
}

const annotations = new WeakMap<AnyResponse, Record<string, unknown>>();

/** Adds fields to the request's access line (the handler's findings). */
export function annotate(res: AnyResponse, fields: Readonly<Record<string, unknown>>): void {
  annotations.set(res, { ...annotations.get(res), ...fields });
}

export function withFrontDoor<Req extends AnyRequest, Res extends AnyResponse>(
  front: FrontDoor,
  handler: (req: Req, res: Res) => void,
): (req: Req, res: Res) => void {
  return (req, res) => {
    const requestId = requestIdOf(req);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    const log = front.log;
    if (log !== undefined) {
      const started = process.hrtime.bigint();
      let written = false;
      const write = (finished: boolean): void => {
        if (written) return;
        written = true;
        log(
          {
            requestId,
            method: req.method ?? '',
            path: (req.url ?? '/').split('?', 1)[0] ?? '/',
            status: res.statusCode,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            httpVersion: req.httpVersion,
            finished,
          },
          annotations.get(res),
        );
      };
      res.once('finish', () => write(true));
      res.once('close', () => write(res.writableFinished));
    }
    if (hasDuplicateHost(req)) {
      front.refuse(req, res, { status: 400, reason: 'DuplicateHost', message: DUPLICATE_HOST_MESSAGE, requestId });
      return;
    }
    handler(req, res);
  };
}
