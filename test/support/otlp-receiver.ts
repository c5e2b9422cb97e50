/**
 * A loopback OTLP/HTTP trace endpoint (POST /v1/traces, JSON) for the unit tier only, which builds no Go
 * program: test/unit/runtime/otlp-span-exporter.test.ts checks that the exporter the SDK is wired with really
 * sends over HTTP. The integration tests are judged by a real OpenTelemetry Collector (otel-collector.ts).
 * Anything but an OTLP/JSON trace export (protobuf, another path) is answered 415 and recorded as refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spansOfTracesData, type ExportedSpan } from './otlp-json.js';

export class OtlpReceiver {
  readonly spans: ExportedSpan[] = [];
  /** Requests that were not OTLP/JSON trace exports (content type and path). */
  readonly refused: string[] = [];
  private server: http.Server | undefined;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const type = req.headers['content-type'] ?? '';
        if (req.url !== '/v1/traces' || !type.startsWith('application/json')) {
          this.refused.push(`${type} ${req.url ?? ''}`);
          res.writeHead(415).end();
          return;
        }
        this.spans.push(...spansOfTracesData(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }
}
