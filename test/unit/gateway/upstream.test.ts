import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CallerWatch } from '../../../src/gateway/caller.js';
import { OutlierDetector } from '../../../src/gateway/outlier-detection.js';
import type { Target } from '../../../src/gateway/routing-table.js';
import { answerBytes, UpstreamClient, UpstreamFailure } from '../../../src/gateway/upstream.js';

/** A loopback model server: `behave` decides each call's fate; `calls` counts the requests it read whole. */
interface Server {
  readonly target: Target;
  calls: number;
  close(): Promise<void>;
}

type Behaviour = 'answer' | 'reset-after-reading' | 'break-mid-answer' | 'hang';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(behave: Behaviour): Promise<Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.calls++;
      if (behave === 'reset-after-reading') {
        req.socket.resetAndDestroy();
        return;
      }
      if (behave === 'hang') return;
      if (behave === 'break-mid-answer') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"predictions":');
        setTimeout(() => req.socket.resetAndDestroy(), 20);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"predictions":[1]}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: Server = {
    target: { origin: `http://127.0.0.1:${port}`, basePath: '' },
    calls: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(state);
  return state;
}

/** An address whose connections are refused: a port that was listened on and closed. */
async function refusing(): Promise<Target> {
  const s = await serve('answer');
  servers.splice(servers.indexOf(s), 1);
  await s.close();
  return s.target;
}

const request = { path: '/v1/models/m:predict', body: '{"instances":[1]}', headers: {} };

function client(): UpstreamClient {
  return new UpstreamClient({ timeoutMs: 5_000, outliers: new OutlierDetector({ baseEjectionMs: 60_000 }) });
}

describe('UpstreamClient against real loopback servers', () => {
  it('retries a refused connect once on another endpoint, and ejects the refusing one at once', async () => {
    const dead = await refusing();
    const live = await serve('answer');
    const upstream = client();
    try {
      // The refusing target first: the set's round-robin starts at its first target.
      const res = await upstream.call('m', [dead, live.target], request, new CallerWatch());
      expect(res.status).toBe(200);
      expect(res.retried).toBe(true);
      expect(res.target).toBe(live.target);
      expect(answerBytes(res).toString()).toBe('{"predictions":[1]}');
      expect(upstream.outliers.isEjected(dead.origin)).toBe(true);
      // Ejected: no further call tries it, so none is retried.
      for (let i = 0; i < 10; i++) {
        const again = await upstream.call('m', [dead, live.target], request, new CallerWatch());
        expect([again.retried, again.target]).toEqual([false, live.target]);
      }
    } finally {
      await upstream.close();
    }
  });

  it('does not retry a call whose connection was reset after it was sent; the endpoint is ejected at once', async () => {
    const resetting = await serve('reset-after-reading');
    const live = await serve('answer');
    const upstream = client();
    try {
      const failure = await upstream.call('m', [resetting.target, live.target], request, new CallerWatch()).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(UpstreamFailure);
      expect((failure as UpstreamFailure).kind).toBe('reset');
      // The model server read the call; the other never saw it.
      expect([resetting.calls, live.calls]).toEqual([1, 0]);
      expect(upstream.outliers.isEjected(resetting.target.origin)).toBe(true);
      const next = await upstream.call('m', [resetting.target, live.target], request, new CallerWatch());
      expect(next.target).toBe(live.target);
      expect(resetting.calls).toBe(1);
    } finally {
      await upstream.close();
    }
  });

  it('calls a connection broken during the answer broken, not retried', async () => {
    const breaking = await serve('break-mid-answer');
    const live = await serve('answer');
    const upstream = client();
    try {
      const failure = await upstream.call('m', [breaking.target, live.target], request, new CallerWatch()).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((failure as UpstreamFailure).kind).toBe('broken');
      expect(live.calls).toBe(0);
      expect(upstream.outliers.isEjected(breaking.target.origin)).toBe(true);
    } finally {
      await upstream.close();
    }
  });

  it('ends a call at once, as cancelled and not retried, when its caller goes away mid-exchange', async () => {
    const hanging = await serve('hang');
    const live = await serve('answer');
    const upstream = client();
    try {
      const caller = new CallerWatch();
      const started = performance.now();
      const pending = upstream.call('m', [hanging.target, live.target], request, caller).then(
        () => undefined,
        (err: unknown) => err,
      );
      setTimeout(() => caller.leave(new Error('the client closed the connection')), 50);
      const failure = await pending;
      expect(failure).toBeInstanceOf(UpstreamFailure);
      expect((failure as UpstreamFailure).kind).toBe('cancelled');
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(live.calls).toBe(0);
      // A call whose caller has already gone is not sent at all.
      const before = hanging.calls + live.calls;
      const late = await upstream.call('m', [live.target], request, caller).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((late as UpstreamFailure).kind).toBe('cancelled');
      expect(hanging.calls + live.calls).toBe(before);
    } finally {
      await upstream.close();
    }
  });

  it('streams: a refused connect is retried on another endpoint, a reset after sending is not', async () => {
    const dead = await refusing();
    const resetting = await serve('reset-after-reading');
    const live = await serve('answer');
    const upstream = client();
    try {
      const res = await upstream.stream('s', [dead, live.target], request, new CallerWatch());
      expect([res.status, res.retried, res.target]).toEqual([200, true, live.target]);
      await res.body.resume().once('end', () => undefined);
      const failure = await upstream.stream('r', [resetting.target, live.target], request, new CallerWatch()).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((failure as UpstreamFailure).kind).toBe('reset');
      expect(live.calls).toBe(1);
    } finally {
      await upstream.close();
    }
  });
});
