/**
 * What a container built for Vertex does, as a real HTTP server in the model host: GET on its health route answers
 * 200; POST {instances, parameters} on its predict route answers {predictions}, one per instance. It keeps what it
 * received, so a test sees which calls reached it.
 */
import http from 'node:http';
import { listenInHost } from './harness.js';

export class VertexContainerServer {
  readonly received: { path: string; body: unknown }[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/health') return void res.writeHead(200).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { instances: unknown[] };
      this.received.push({ path: req.url ?? '', body });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ predictions: body.instances.map((_, i) => this.predictionFor(i)) }));
    });
  });

  /** `predictionFor(i)`: the prediction it answers for the i-th instance. */
  constructor(private readonly predictionFor: (index: number) => unknown) {}

  /** Listens in the model host; resolves to the port. */
  start(): Promise<number> {
    return listenInHost(this.server);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
