import { afterEach, describe, expect, it } from 'vitest';
import { HealthChecks, startHealthServer, type RunningHealthServer } from '../../../src/runtime/health-server.js';
import { restClientRequests } from '../../../src/base/metrics.js';

let server: RunningHealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function get(path: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${server?.port}${path}`);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

describe('health server', () => {
  it('serves Prometheus metrics from the runtime registry', async () => {
    restClientRequests.inc({ verb: 'GET', code: '200' });
    server = await startHealthServer({ port: 0, host: '127.0.0.1', checks: new HealthChecks() });
    const m = await get('/metrics');
    expect(m.status).toBe(200);
    expect(m.type).toContain('text/plain');
    expect(m.body).toMatch(/^rest_client_requests_total\{verb="GET",code="200"\} \d+/m);
    expect(m.body).toContain('# TYPE workqueue_depth gauge');
  });

  it('readyz fails with the failing check named until every check passes; healthz is independent', async () => {
    let synced = false;
    const checks = new HealthChecks();
    checks.addReadyCheck('informers', () => synced || 'deployedmodels not synced');
    checks.addReadyCheck('webhook-certs', () => true);
    server = await startHealthServer({ port: 0, host: '127.0.0.1', checks });
    const notReady = await get('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain('[-]informers failed: deployedmodels not synced');
    expect(notReady.body).toContain('[+]webhook-certs ok');
    expect((await get('/healthz')).status).toBe(200);
    synced = true;
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect((await get('/readyz?verbose')).body).toContain('[+]informers ok');
  });

  it('a check that throws counts as failed, and unknown paths are 404', async () => {
    const checks = new HealthChecks();
    checks.addLiveCheck('event-loop', () => {
      throw new Error('stuck');
    });
    server = await startHealthServer({ port: 0, host: '127.0.0.1', checks });
    const h = await get('/healthz');
    expect(h.status).toBe(503);
    expect(h.body).toContain('[-]event-loop failed: stuck');
    expect((await get('/nope')).status).toBe(404);
  });
});

describe('health server: a failing /metrics', () => {
  it('answers 500 with the request id, logs one error line with it and the cause, and counts it', async () => {
    const { Registry, Gauge } = await import('prom-client');
    const { httpServerErrors } = await import('../../../src/http/server-errors.js');
    const registry = new Registry();
    new Gauge({
      name: 'broken_gauge',
      help: 'collects by throwing',
      registers: [registry],
      collect() {
        throw new RangeError('forced collect fault');
      },
    });
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      checks: new HealthChecks(),
      registry,
      log: { error: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) },
    });
    const before =
      (await httpServerErrors.get()).values.find((v) => v.labels.server === 'health' && v.labels.cause === 'RangeError')
        ?.value ?? 0;
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { 'x-request-id': 'scrape-7' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe('scrape-7');
    expect(await res.text()).toBe('metrics could not be collected; request id scrape-7\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request failed with a server error',
      obj: { server: 'health', route: '/metrics', requestId: 'scrape-7', status: 500, cause: 'RangeError' },
    });
    expect((lines[0]?.obj.err as { stack: string }).stack).toContain('forced collect fault');
    const after =
      (await httpServerErrors.get()).values.find((v) => v.labels.server === 'health' && v.labels.cause === 'RangeError')
        ?.value ?? 0;
    expect(after).toBe(before + 1);
  });
});
