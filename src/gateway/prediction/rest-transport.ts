/**
 * The prediction pipeline over REST: a `POST /v1/{endpoint}:{method}` request is read as a PredictionCall,
 * and its outcome written as the HTTP answer, on HTTP/1.1 and HTTP/2 alike (node:http and node:http2's
 * compatibility API share the calls used here).
 *
 * This transport decides what only a socket can: when `100 Continue` is sent (once the call is admitted,
 * so a refused client never sends its body: RFC 9110 §10.1.1), and whether a refusal given before the
 * body was read closes the connection rather than read a large body (http/unread-body.ts). On HTTP/2 a
 * refused stream is reset instead: the connection carries other calls.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as http2, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { requestIdOf } from '../../http/request-id.js';
import { closesRatherThanReads, closeWithoutReading } from '../../http/unread-body.js';
import { CallerWatch } from '../caller.js';
import { bodyWeight } from '../fairness.js';
import { writeAnswer } from './answer.js';
import type { CallBody, PredictionCall } from './call.js';
import type { Outcome, PredictionPipeline } from './pipeline.js';
import { readBody } from './read-body.js';

export type RestRequest = IncomingMessage | Http2ServerRequest;
export type RestResponse = ServerResponse | Http2ServerResponse;

function isHttp2(req: RestRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2;
}

/**
 * Serves one request whose path isPredictionRequest matched; never rejects. `awaitingContinue`: the client
 * sent `Expect: 100-continue` and holds its body until it is told to send it.
 */
export async function serveRest(
  pipeline: PredictionPipeline,
  req: RestRequest,
  res: RestResponse,
  awaitingContinue = false,
): Promise<void> {
  const caller = new CallerWatch();
  const onClose = (): void => {
    if (!res.writableFinished) caller.leave(new Error('the client closed the connection'));
  };
  res.once('close', onClose);
  let waitingForContinue = awaitingContinue;
  const body: CallBody = {
    weight: (limit) => bodyWeight(req.headers, limit),
    closesIfRefused: (largeBodyBytes) =>
      !waitingForContinue &&
      closesRatherThanReads({ headers: req.headers, complete: req.complete, awaitingContinue: false }, largeBodyBytes),
    read: (limit) => {
      if (waitingForContinue) {
        res.writeContinue();
        waitingForContinue = false;
      }
      return readBody(req as IncomingMessage, limit);
    },
  };
  const call: PredictionCall = {
    path: req.url ?? '',
    headers: req.headers,
    client: req.socket.remoteAddress,
    requestId: requestIdOf(req as IncomingMessage),
    body,
    caller,
  };
  try {
    await pipeline.run(call, (outcome) => write(req, res, outcome, waitingForContinue, pipeline.largeBodyBytes));
  } finally {
    res.off('close', onClose);
  }
}

function write(
  req: RestRequest,
  res: RestResponse,
  outcome: Outcome,
  awaitingContinue: boolean,
  largeBodyBytes: number,
): void {
  const refusedUnread =
    outcome.refusal !== undefined &&
    !outcome.bodyRead &&
    closesRatherThanReads({ headers: req.headers, complete: req.complete, awaitingContinue }, largeBodyBytes);
  if (isHttp2(req)) {
    writeAnswer(res, outcome.answer, outcome.call);
    // The stream's unread body is not wanted: NO_ERROR after the answer tells the client to stop sending (RFC 9113 §8.1).
    if (refusedUnread) res.once('finish', () => req.stream.close(http2.NGHTTP2_NO_ERROR));
    return;
  }
  const http1 = res as ServerResponse;
  if (refusedUnread) closeWithoutReading(req, http1);
  else if (outcome.answer.status === 413) http1.setHeader('connection', 'close');
  writeAnswer(http1, outcome.answer, outcome.call);
}
