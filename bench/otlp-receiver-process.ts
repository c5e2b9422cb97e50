/**
 * An OTLP/HTTP (JSON) sink in a process of its own, for the tracing benchmark only: it accepts every export
 * and counts the spans in it (the benchmark checks that the 1.0 arm dropped none), nothing more; the tests'
 * judge of what is exported is a real OpenTelemetry Collector (test/support/otel-collector.ts). Its own
 * process, because parsing the exported batches (~1 KB of JSON per span) is the receiver's work, not the
 * traced code's: in the benchmark's process it was charged to the in-process figure of the tracing path.
 * `startReceiverProcess` forks this file; run so, it serves, sends its port over IPC, answers each `spans`
 * message with its count, and exits on `exit`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);

export interface ReceiverProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Spans received so far. */
  spans(): Promise<number>;
}

export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child = fork(self, ['--serve'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`OTLP receiver process exited with ${code}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    spans: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { spans: number }).spans));
        child.send('spans');
      }),
  };
}

if (process.argv[1] === self && process.argv[2] === '--serve') {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[];
      };
      for (const r of body.resourceSpans ?? []) for (const s of r.scopeSpans ?? []) spans += s.spans?.length ?? 0;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
  process.on('message', (m) => (m === 'spans' ? process.send?.({ spans }) : process.exit(0)));
}
