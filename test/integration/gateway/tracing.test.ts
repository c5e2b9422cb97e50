/**
 * W3C trace context through the gateway, as users run it: `endpoint-operator gateway` in its own
 * process with the standard OTEL_* environment, a real OpenTelemetry Collector on loopback judging what
 * the SDK exports (test/support/otel-collector.ts), and a model server on loopback that records the
 * headers it was sent. The operator of the test runs in this process with the SDK wired by
 * startTelemetry, and exports its reconcile spans to the same collector.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelemetry, type Telemetry } from '../../../src/runtime/telemetry.js';
import { createTestNamespace, testCluster } from '../../support/cluster.js';
import { ensureOtelCollector, OtelCollector } from '../../support/otel-collector.js';
import { SPAN_KIND, type ExportedSpan } from '../../support/otlp-json.js';
import {
  apply,
  endpointManifest,
  eventually,
  listenInHost,
  post,
  serviceManifest,
  setUpNamespace,
  spawnCliGateway,
  waitDeployed,
  type GatewayEnv,
} from './harness.js';

/** A KServe V1 model server that records each request's headers; `resetNext` drops the next connection unanswered. */
class RecordingModelServer {
  readonly received: http.IncomingHttpHeaders[] = [];
  resetNext = false;
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (this.resetNext) {
        // A connection reset after the call was sent, before any answer: not retried (upstream.ts).
        this.resetNext = false;
        req.socket.destroy();
        return;
      }
      this.received.push(req.headers);
      const { instances } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { instances: unknown[] };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ predictions: instances.map(() => 0.5) }));
    });
  });

  async start(): Promise<number> {
    return listenInHost(this.server);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const OTEL_KEYS = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_SERVICE_NAME'] as const;

let env: GatewayEnv;
let collector: OtelCollector;
let model: RecordingModelServer;
let telemetry: Telemetry | undefined;
let endpointName = '';
const children: ChildProcess[] = [];

/** `endpoint-operator gateway` in its own process with `otel` added to its environment; resolves to its base URL once it answers. */
async function startCliGateway(otel: Record<string, string>): Promise<string> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...otel };
  for (const key of OTEL_KEYS) if (!(key in otel)) delete childEnv[key];
  const { child, port } = await spawnCliGateway(
    // Trace context is the subject here, not who calls: the caller's own credential must still never reach the model server.
    ['--namespaces', env.namespace, '--health-port=-1', '--auth=none'],
    { env: childEnv },
  );
  children.push(child);
  const base = `http://127.0.0.1:${port}`;
  await eventually(
    'the gateway answers',
    async () => {
      try {
        return (await post(`${base}/v1/${endpointName}:predict`, { instances: [[1]] })).status === 200;
      } catch {
        return false;
      }
    },
    90_000,
  );
  return base;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

function spansOf(spans: readonly ExportedSpan[], traceId: string, service: string): ExportedSpan[] {
  return spans.filter((s) => s.traceId === traceId && s.service === service);
}

beforeAll(async () => {
  // Built from the Go module proxy on a fresh machine: minutes on two cores, once.
  collector = await OtelCollector.start(await ensureOtelCollector((line) => console.error(line)));
  // The operator of this test (in this process) exports its reconcile spans to the collector.
  process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${collector.endpoint}/v1/traces`;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  telemetry = startTelemetry('endpoint-operator-tracing-test');
  env = await setUpNamespace(await createTestNamespace('gateway-tracing'));
  model = new RecordingModelServer();
  const port = await model.start();
  await apply(env.namespace, serviceManifest({ name: 'traced', protocol: 'KServeV1', ports: [port] }));
  await apply(
    env.namespace,
    endpointManifest('traced', { '7': 100 }, [
      { name: 'traced-model', id: '7', backend: { service: 'traced', protocol: 'KServeV1' } },
    ]),
  );
  endpointName = await waitDeployed(env.namespace, 'traced', ['7']);
}, 1_200_000);

afterAll(async () => {
  for (const child of children) await stopChild(child);
  await env?.operator.stop();
  await telemetry?.shutdown();
  for (const key of OTEL_KEYS) delete process.env[key];
  await model?.close();
  await collector?.stop();
});

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let base = '';
  beforeAll(async () => {
    base = await startCliGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'gateway-under-test',
    });
  });

  it("continues the caller's trace through the gateway's spans to the model server's traceparent", async () => {
    const before = model.received.length;
    const r = await post(
      `${base}/v1/${endpointName}:predict`,
      { instances: [[1, 2]] },
      {
        traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
        tracestate: 'caller=yes',
        baggage: 'tenant=acme',
        authorization: 'Bearer not-for-the-model-server',
      },
    );
    expect(r.status, r.text).toBe(200);
    const sent = model.received[before];
    expect(sent).toBeDefined();
    const [, traceId, parentId, flags] = String(sent?.traceparent).split('-');
    expect(traceId).toBe(TRACE_ID);
    expect(flags).toBe('01');
    expect(sent?.tracestate).toBe('caller=yes');
    expect(sent?.baggage).toBe('tenant=acme');
    expect(sent?.authorization).toBeUndefined();

    const spans = await collector.waitFor('the gateway exported the call', (all) => {
      const got = spansOf(all, TRACE_ID, 'gateway-under-test');
      return got.length >= 2 ? got : undefined;
    });
    const server = spans.find((s) => s.kind === SPAN_KIND.server);
    const client = spans.find((s) => s.kind === SPAN_KIND.client);
    expect(server?.parentSpanId).toBe(CALLER_SPAN);
    expect(server?.name).toBe('POST /v1/{endpoint}:predict');
    expect(server?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'endpoint_operator.method': 'predict',
      'endpoint_operator.namespace': env.namespace,
      'endpoint_operator.endpoint': 'traced',
      'endpoint_operator.endpoint.resource_name': endpointName,
      'endpoint_operator.deployed_model.id': '7',
    });
    // The model server's parent is the gateway's client span, itself a child of the server span.
    expect(client?.parentSpanId).toBe(server?.spanId);
    expect(parentId).toBe(client?.spanId);
    expect(client?.attributes).toMatchObject({
      'http.response.status_code': 200,
      'server.address': testCluster().modelHost.address,
      'endpoint_operator.upstream.retry': false,
    });
    // No payload and no credential in any exported attribute.
    const exported = JSON.stringify(spans);
    expect(exported).not.toContain('not-for-the-model-server');
    expect(exported).not.toContain('[1,2]');
  });

  it('starts a trace when the caller sent none', async () => {
    const before = model.received.length;
    expect((await post(`${base}/v1/${endpointName}:predict`, { instances: [[3]] })).status).toBe(200);
    const [, traceId = '', parentId, flags] = String(model.received[before]?.traceparent).split('-');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(flags).toBe('01');
    const server = await collector.waitFor('the root server span', (all) =>
      spansOf(all, traceId, 'gateway-under-test').find((s) => s.kind === SPAN_KIND.server),
    );
    expect(server.parentSpanId).toBe('');
    // The model server's parent is the gateway's client span, child of the server span.
    const client = await collector.waitFor('the client span', (all) =>
      spansOf(all, traceId, 'gateway-under-test').find((s) => s.kind === SPAN_KIND.client),
    );
    expect(client.parentSpanId).toBe(server.spanId);
    expect(parentId).toBe(client.spanId);
    expect(model.received[before]).not.toHaveProperty('tracestate');
    expect(model.received[before]).not.toHaveProperty('baggage');
  });

  it("honours a caller's decision not to sample: the context goes on with the flag off, nothing is exported", async () => {
    const traceId = 'cccccccccccccccccccccccccccccccc';
    const before = model.received.length;
    expect(
      (
        await post(
          `${base}/v1/${endpointName}:predict`,
          { instances: [[6]] },
          { traceparent: `00-${traceId}-${CALLER_SPAN}-00` },
        )
      ).status,
    ).toBe(200);
    const [, sentTrace, , flags] = String(model.received[before]?.traceparent).split('-');
    expect(sentTrace).toBe(traceId);
    expect(flags).toBe('00');
    // A later sampled call's spans arrive (the collector writes what it receives in order); none of the
    // unsampled trace's ever do.
    const marker = 'dddddddddddddddddddddddddddddddd';
    expect(
      (
        await post(
          `${base}/v1/${endpointName}:predict`,
          { instances: [[7]] },
          { traceparent: `00-${marker}-${CALLER_SPAN}-01` },
        )
      ).status,
    ).toBe(200);
    const spans = await collector.waitFor(
      'the sampled call exported',
      (all) => spansOf(all, marker, 'gateway-under-test').length >= 2 && all,
    );
    expect(spansOf(spans, traceId, 'gateway-under-test')).toEqual([]);
  });

  it('shows a call reset after it was sent as one failed client span under the server span, not retried', async () => {
    const traceId = 'aaaabbbbccccddddeeeeffff00001111';
    model.resetNext = true;
    const r = await post(
      `${base}/v1/${endpointName}:predict`,
      { instances: [[4]] },
      { traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    );
    expect(r.status, r.text).toBe(503);
    const spans = await collector.waitFor('the client and server spans', (all) => {
      const got = spansOf(all, traceId, 'gateway-under-test');
      return got.some((s) => s.kind === SPAN_KIND.client) && got.some((s) => s.kind === SPAN_KIND.server)
        ? got
        : undefined;
    });
    const server = spans.find((s) => s.kind === SPAN_KIND.server);
    const clients = spans.filter((s) => s.kind === SPAN_KIND.client);
    expect(clients).toHaveLength(1);
    expect(clients[0]?.parentSpanId).toBe(server?.spanId);
    expect(clients[0]?.attributes['endpoint_operator.upstream.retry']).toBe(false);
    expect(clients[0]?.statusCode).toBe(2);
    // The transport's error code (semantic conventions' error.type), as undici reported the reset.
    expect(clients[0]?.attributes['error.type']).toMatch(/^(UND_ERR_SOCKET|ECONNRESET|EPIPE)$/);
  });
});

describe('with no exporter configured', () => {
  it.each([
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none' }, '11111111111111111111111111111111'],
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }, '22222222222222222222222222222222'],
  ])(
    "%s: sends nothing, and the caller's context reaches the model server unchanged",
    async (_name, off: Record<string, string>, traceId) => {
      const base = await startCliGateway({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'gateway-off',
        ...off,
      });
      const before = model.received.length;
      const traceparent = `00-${traceId}-${CALLER_SPAN}-01`;
      expect(
        (
          await post(
            `${base}/v1/${endpointName}:predict`,
            { instances: [[5]] },
            { traceparent, tracestate: 'caller=off', baggage: 'k=v' },
          )
        ).status,
      ).toBe(200);
      expect(model.received[before]).toMatchObject({ traceparent, tracestate: 'caller=off', baggage: 'k=v' });
      const child = children.at(-1) as ChildProcess;
      await stopChild(child);
      // Well past the 100 ms batch delay, and the shutdown flush (had an SDK been registered) is over; then all
      // the collector received is in its file.
      await sleep(500);
      await collector.allWritten();
      expect((await collector.spans()).filter((s) => s.service === 'gateway-off')).toEqual([]);
    },
  );
});

describe('the operator', () => {
  it('records a span per reconcile with the kind, namespace/name and result', async () => {
    const span = await collector.waitFor('a reconcile span of the endpoint', (all) =>
      all.find(
        (s) =>
          s.service === 'endpoint-operator-tracing-test' &&
          s.name === 'reconcile PredictionEndpoint' &&
          s.attributes['endpoint_operator.name'] === 'traced',
      ),
    );
    expect(span.kind).toBe(SPAN_KIND.internal);
    expect(span.attributes).toMatchObject({
      'endpoint_operator.kind': 'PredictionEndpoint',
      'k8s.namespace.name': env.namespace,
    });
    expect(['success', 'requeue_after', 'error']).toContain(span.attributes['endpoint_operator.reconcile.result']);
  });
});
