/** The request and answer objects of a port: node:http's on plain HTTP/1.1, node:http2's compatibility API on TLS. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;
export type RequestHandler = (req: AnyRequest, res: AnyResponse) => void;
