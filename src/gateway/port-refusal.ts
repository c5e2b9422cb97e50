/**
 * The gateway's answer to a request its port refuses itself (src/http/front-door.ts: more than one Host header,
 * RFC 9112 §3.2), in Google's error form. The port also gives every answer its X-Request-Id.
 */
import type { AnyResponse, AnyRequest } from '../http/server.js';
import type { PortRefusal } from '../http/front-door.js';
import { renderGoogleError } from './error-answer.js';
import { GoogleApiError } from './google-errors.js';

export function sendPortRefusal(req: AnyRequest, res: AnyResponse, refusal: PortRefusal): void {
  const rendered = renderGoogleError(new GoogleApiError('INVALID_ARGUMENT', refusal.message));
  // HTTP/2 has no Connection header (RFC 9113 §8.2.2): the stream ends, the connection carries others.
  const close = req.httpVersionMajor === 2 ? {} : { connection: 'close' };
  res.writeHead(refusal.status, {
    ...rendered.headers,
    'content-length': Buffer.byteLength(rendered.body),
    ...close,
  });
  res.end(rendered.body);
}
