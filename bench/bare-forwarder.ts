/**
 * B6's yardstick: the least a node:http + undici forwarder can cost on this machine. It reads the
 * request body, sends it unchanged to one fixed model server over an undici keep-alive pool (the
 * gateway's client), and writes the answer back: no routing, parsing, metrics or logging. Run in its
 * own process by bench/gateway.ts (`--yardstick`) and, over TLS, by bench/grpc.ts (bare-forwarder-process.ts),
 * so the gateway's CPU and added latency can be set against a floor measured in the same run and load rather
 * than against the goal alone.
 *
 * `router: 'fastify'` serves the same forward from a fastify route, as the gateway's REST predictions would be
 * served if they went through its fastify instance rather than ahead of it (src/gateway/server.ts): a
 * content-type parser that leaves the body unread and a hijacked reply, because the prediction pipeline reads
 * the body and writes the answer on Node's own request and response. Its cost over the node:http forwarder,
 * in the same run, is what the gateway's raw prediction path saves.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import fastify from 'fastify';
import { Agent, type Dispatcher } from 'undici';

export type ForwarderRouter = 'node' | 'fastify';

/** `tls`: serve HTTPS (HTTP/1.1) with this certificate, as the gateway's TLS port does. */
export async function startBareForwarder(
  upstreamOrigin: string,
  upstreamPath: string,
  tls?: { readonly cert: string; readonly key: string },
  router: ForwarderRouter = 'node',
): Promise<{ port: number }> {
  const agent = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const answer: Buffer[] = [];
      let status = 0;
      let type = 'application/json';
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: () => undefined,
        onResponseStart: (_c, code, headers) => {
          status = code;
          const t = headers['content-type'];
          if (typeof t === 'string') type = t;
        },
        onResponseData: (_c, chunk) => void answer.push(chunk),
        onResponseEnd: () => {
          const out = Buffer.concat(answer);
          res.writeHead(status, { 'content-type': type, 'content-length': out.length }).end(out);
        },
        onResponseError: () => void res.writeHead(502).end(),
      };
      agent.dispatch(
        {
          origin: upstreamOrigin,
          path: upstreamPath,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        },
        handler,
      );
    });
  };
  const serve = (handler: (req: IncomingMessage, res: ServerResponse) => void) =>
    tls === undefined
      ? createServer({ keepAliveTimeout: 65_000 }, handler)
      : createTlsServer({ keepAliveTimeout: 65_000, cert: tls.cert, key: tls.key }, handler);
  if (router === 'fastify') {
    const app = fastify({ logger: false, serverFactory: serve });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    app.post('/*', (request, reply) => {
      reply.hijack();
      forward(request.raw, reply.raw);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port };
  }
  const server = serve(forward);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port };
}
