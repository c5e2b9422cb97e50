import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { CONVERSION_DATA_ANNOTATION } from '../../../../src/api/registry/conversion.js';
import { RegistryLookupCache } from '../../../../src/gateway/registry/cache.js';
import { clampMaxEndpoints, type LookupService } from '../../../../src/gateway/registry/lookup.js';
import { registryLookupRoutes } from '../../../../src/gateway/registry/routes.js';
import { installErrorAnswerer } from '../../../../src/gateway/error-answer.js';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';
import { staticInformer, type StaticInformer } from '../../../support/static-informer.js';
import { registryEndpoint, registryService } from '../../reconcilers/fixtures.js';
import { GatewayAuth } from '../../../../src/gateway/auth/gateway-auth.js';

const SVC = 'projects/my-shop/locations/us-east1/namespaces/shop/services/checkout';
const RESERVED = ['endpoint-operator.dev'];

function ep(id: string, extra: Record<string, unknown> = {}): KubeObject {
  return registryEndpoint(`checkout-${id}`, `${SVC}/endpoints/${id}`, extra).build();
}

describe('clampMaxEndpoints', () => {
  it.each([
    [undefined, 25],
    [0, 25],
    [-3, 25],
    [1, 1],
    [25, 25],
    [100, 100],
    [101, 100],
    [1_000_000, 100],
  ])('%s → %i', (requested, expected) => {
    expect(clampMaxEndpoints(requested)).toBe(expected);
  });
});

describe('registry lookup over the informer caches', () => {
  let services: StaticInformer;
  let endpoints: StaticInformer;
  let cache: RegistryLookupCache;
  let app: FastifyInstance;

  async function setUp(svcObjects: KubeObject[], epObjects: KubeObject[]): Promise<void> {
    services = staticInformer('services', svcObjects);
    endpoints = staticInformer('endpoints', epObjects);
    cache = new RegistryLookupCache([services.informer], [endpoints.informer], { reservedPrefixes: RESERVED });
    await Promise.all([services.start(), endpoints.start()]);
    app = Fastify({ logger: false });
    installErrorAnswerer(app, { log: pino({ level: 'silent' }), bodyLimit: 1_500_000 });
    await registryLookupRoutes(app, { source: cache });
    await app.ready();
  }

  afterEach(async () => {
    services.stop();
    endpoints.stop();
    await app.close();
  });

  const resolve = (body: unknown, query = ''): Promise<LightMyRequestResponse> =>
    app.inject({ method: 'POST', url: `/v1/${SVC}:resolve${query}`, payload: body as Record<string, unknown> });

  describe('with one service', () => {
    beforeEach(async () => {
      const many = Array.from({ length: 130 }, (_, i) => ep(`e${String(i).padStart(3, '0')}`, { port: 1000 + i }));
      await setUp(
        [
          registryService('checkout', SVC)
            .spec({ annotations: { team: 'payments', 'endpoint-operator.dev/internal': 'x' } })
            .build(),
        ],
        [
          ep('a', { address: '10.0.0.1', port: 80, annotations: { owner: 'sd', 'endpoint-operator.dev/hidden': 'y' } }),
          // invalid (bad address): not Ready, never resolved
          ep('bad', { address: '10.0.0.300' }),
          // being deleted: not resolved
          registryEndpoint('checkout-gone', `${SVC}/endpoints/gone`).deleting().build(),
          // v1beta1 network, kept in the conversion annotation while stored as v1
          {
            ...ep('net', { address: '2001:db8::5', port: 443 }),
            metadata: {
              ...ep('net').metadata,
              name: 'checkout-net',
              annotations: {
                [CONVERSION_DATA_ANNOTATION]: JSON.stringify({
                  spec: { network: 'projects/123/locations/global/networks/vpc' },
                }),
              },
            },
          },
          ...many,
        ],
      );
    });

    it('resolves Ready endpoints with effective annotations, network and uid, in the REST shape', async () => {
      const res = await resolve({ endpointFilter: 'annotations:owner OR port=443' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('application/json');
      const body = res.json();
      expect(Object.keys(body)).toEqual(['service']);
      expect(body.service.name).toBe(SVC);
      expect(body.service.annotations).toEqual({ team: 'payments' });
      expect(body.service.uid).toMatch(/^uid-checkout-/);
      expect(body.service.endpoints).toEqual([
        {
          name: `${SVC}/endpoints/a`,
          address: '10.0.0.1',
          port: 80,
          annotations: { owner: 'sd' },
          uid: expect.stringMatching(/^uid-/),
        },
        {
          name: `${SVC}/endpoints/net`,
          address: '2001:db8::5',
          port: 443,
          network: 'projects/123/locations/global/networks/vpc',
          uid: expect.stringMatching(/^uid-/),
        },
      ]);
    });

    it('clamps maxEndpoints: default 25, at most 100, below 1 means the default, proto3 string form accepted', async () => {
      const count = async (body: unknown): Promise<number> =>
        ((await resolve(body)).json().service.endpoints as unknown[]).length;
      expect(await count({})).toBe(25);
      expect(await count({ maxEndpoints: 0 })).toBe(25);
      expect(await count({ maxEndpoints: -7 })).toBe(25);
      expect(await count({ maxEndpoints: 3 })).toBe(3);
      expect(await count({ maxEndpoints: '40' })).toBe(40);
      expect(await count({ maxEndpoints: 1000 })).toBe(100);
      // 132 Ready endpoints, 100 returned, in name order
      const names = (await resolve({ maxEndpoints: 100 }))
        .json()
        .service.endpoints.map((e: { name: string }) => e.name);
      expect(names).toEqual([...names].sort());
    });

    it('answers a syntax error with 400 INVALID_ARGUMENT naming the field and the position', async () => {
      const res = await resolve({ endpointFilter: 'port=80 and port=443' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        error: {
          code: 400,
          status: 'INVALID_ARGUMENT',
          message: expect.stringContaining('endpointFilter: invalid filter at position 9'),
        },
      });
    });

    it('answers an unknown field with an empty list', async () => {
      const res = await resolve({ endpointFilter: 'doesnotexist.foo=bar' });
      expect(res.statusCode).toBe(200);
      expect(res.json().service.endpoints).toBeUndefined();
    });

    it('refuses bad field types, bad JSON and alt=proto in Google form; accepts $alt=json', async () => {
      expect((await resolve({ maxEndpoints: 'many' })).json().error).toMatchObject({
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: expect.stringContaining('maxEndpoints'),
      });
      expect((await resolve({ endpointFilter: 7 })).json().error.message).toContain('endpointFilter');
      const bad = await app.inject({
        method: 'POST',
        url: `/v1/${SVC}:resolve`,
        headers: { 'content-type': 'application/json' },
        payload: '{"maxEndpoints":',
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.status).toBe('INVALID_ARGUMENT');
      expect((await resolve({}, '?alt=proto')).json().error.message).toContain('alt');
      expect((await resolve({ maxEndpoints: 1 }, '?$alt=json')).statusCode).toBe(200);
    });

    it('answers an unknown service or method with 404 NOT_FOUND', async () => {
      const other = await app.inject({ method: 'POST', url: `/v1/${SVC}x:resolve`, payload: {} });
      expect(other.statusCode).toBe(404);
      expect(other.json().error).toMatchObject({
        code: 404,
        status: 'NOT_FOUND',
        message: expect.stringContaining(`${SVC}x`),
      });
      const method = await app.inject({ method: 'POST', url: `/v1/${SVC}:lookup`, payload: {} });
      expect(method.json().error.status).toBe('NOT_FOUND');
    });

    it('GET returns the service without endpoints', async () => {
      const res = await app.inject({ method: 'GET', url: `/v1/${SVC}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ name: SVC, annotations: { team: 'payments' }, uid: expect.stringMatching(/^uid-/) });
    });

    it('lists endpoints page by page with a filter, and refuses a token used with another filter', async () => {
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const q = new URLSearchParams({ filter: 'port>=1000', pageSize: '50', ...(token ? { pageToken: token } : {}) });
        const res = await app.inject({ method: 'GET', url: `/v1/${SVC}/endpoints?${q.toString()}` });
        expect(res.statusCode).toBe(200);
        const body = res.json();
        seen.push(...body.endpoints.map((e: { name: string }) => e.name));
        token = body.nextPageToken;
        pages++;
        if (pages === 1) {
          const mismatch = await app.inject({
            method: 'GET',
            url: `/v1/${SVC}/endpoints?filter=port>1&pageToken=${encodeURIComponent(token ?? '')}`,
          });
          expect(mismatch.json().error).toMatchObject({
            status: 'INVALID_ARGUMENT',
            message: expect.stringContaining('pageToken'),
          });
        }
      } while (token !== undefined);
      expect(pages).toBe(3);
      expect(seen).toHaveLength(130);
      expect(new Set(seen).size).toBe(130);
      const garbage = await app.inject({ method: 'GET', url: `/v1/${SVC}/endpoints?pageToken=garbage` });
      expect(garbage.json().error.message).toContain('pageToken');
    });

    it('follows endpoint changes as the watch delivers them', async () => {
      const only = (await resolve({ endpointFilter: 'address=10.0.0.9' })).json().service.endpoints;
      expect(only).toBeUndefined();
      endpoints.push('ADDED', ep('z', { address: '10.0.0.9' }));
      expect((await resolve({ endpointFilter: 'address=10.0.0.9' })).json().service.endpoints).toHaveLength(1);
      endpoints.push('MODIFIED', ep('z', { address: '10.0.0.10' }));
      expect((await resolve({ endpointFilter: 'address=10.0.0.9' })).json().service.endpoints).toBeUndefined();
      endpoints.push('DELETED', ep('a'));
      expect((await resolve({ endpointFilter: 'annotations:owner' })).json().service.endpoints).toBeUndefined();
    });
  });

  it('resolves the oldest of two services claiming one name, and the next once it is gone', async () => {
    const older = registryService('checkout', SVC).inNamespace('team-a').created('2026-01-01T00:00:00Z').build();
    const newer = registryService('checkout', SVC).inNamespace('team-b').created('2026-02-01T00:00:00Z').build();
    const invalidOldest = registryService('broken', SVC)
      .inNamespace('team-c')
      .created('2025-01-01T00:00:00Z')
      .spec({ annotations: { 'bad key!': 'x' } })
      .build();
    await setUp(
      [newer, older, invalidOldest],
      [
        { ...ep('a', { address: '10.0.0.1' }), metadata: { ...ep('a').metadata, namespace: 'team-a' } },
        { ...ep('b', { address: '10.0.0.2' }), metadata: { ...ep('b').metadata, namespace: 'team-b' } },
      ],
    );
    expect((await resolve({})).json().service).toMatchObject({
      uid: older.metadata.uid,
      endpoints: [{ address: '10.0.0.1' }],
    });
    services.push('DELETED', older);
    expect((await resolve({})).json().service).toMatchObject({
      uid: newer.metadata.uid,
      endpoints: [{ address: '10.0.0.2' }],
    });
  });
});

describe('resolveServiceText', () => {
  it('is exactly JSON.stringify of resolveService, with and without annotations, endpoints and uid', async () => {
    const { resolveService, resolveServiceText } = await import('../../../../src/gateway/registry/lookup.js');
    const e = (
      i: number,
      extra: Partial<{
        address: string;
        port: number;
        annotations: Record<string, string>;
        network: string;
        uid: string;
      }> = {},
    ) => ({
      name: `${SVC}/endpoints/e${i}`,
      address: '',
      port: 0,
      annotations: {},
      network: '',
      uid: '',
      ...extra,
    });
    const services: LookupService[] = [
      {
        name: SVC,
        annotations: { a: 'b"c' },
        uid: 'u-1',
        endpoints: [
          e(1, {
            address: '10.0.0.1',
            port: 80,
            annotations: { 'k/x': 'v' },
            network: 'projects/1/locations/global/networks/n',
            uid: 'x',
          }),
          e(2),
        ],
      },
      { name: SVC, annotations: {}, uid: '', endpoints: [] },
    ];
    for (const svc of services) {
      for (const req of [{}, { maxEndpoints: 1 }, { endpointFilter: 'port=80' }, { endpointFilter: 'port=1' }]) {
        const source = { service: () => svc };
        expect(resolveServiceText(source, SVC, req)).toBe(JSON.stringify(resolveService(source, SVC, req)));
      }
    }
  });
});

describe('registryLookupPlugin', () => {
  it('builds the lookup over the gateway informers of every watched namespace', async () => {
    const { registryLookupPlugin, registryLookupSource } = await import('../../../../src/gateway/registry/plugin.js');
    const inNs = (o: KubeObject, namespace: string): KubeObject => ({ ...o, metadata: { ...o.metadata, namespace } });
    const sources = new Map<string, StaticInformer>([
      [
        'registryservices@team-a',
        staticInformer('s-a', [
          inNs(registryService('checkout', SVC).created('2026-01-01T00:00:00Z').build(), 'team-a'),
        ]),
      ],
      ['registryendpoints@team-a', staticInformer('e-a', [inNs(ep('a', { address: '10.0.0.1' }), 'team-a')])],
      [
        'registryservices@team-b',
        staticInformer('s-b', [
          inNs(registryService('checkout', SVC).created('2026-02-01T00:00:00Z').build(), 'team-b'),
        ]),
      ],
      ['registryendpoints@team-b', staticInformer('e-b', [inNs(ep('b', { address: '10.0.0.2' }), 'team-b')])],
    ]);
    const requested: string[] = [];
    const informers = {
      informer: ((ref: { plural: string }, namespace?: string) => {
        const key = `${ref.plural}@${namespace ?? '*'}`;
        requested.push(key);
        const s = sources.get(key);
        if (s === undefined) throw new Error(`unexpected informer ${key}`);
        return s.informer;
      }) as never,
    };
    const app = Fastify({ logger: false });
    installErrorAnswerer(app, { log: pino({ level: 'silent' }), bodyLimit: 1_500_000 });
    await app.register(async (scope) =>
      registryLookupPlugin(
        registryLookupSource({ informers, namespaces: ['team-a', 'team-b'] }, ['endpoint-operator.dev']),
      )(scope, { auth: GatewayAuth.disabled() }),
    );
    await Promise.all([...sources.values()].map((s) => s.start()));
    await app.ready();
    try {
      expect(requested.sort()).toEqual([...sources.keys()].sort());
      const res = await app.inject({ method: 'POST', url: `/v1/${SVC}:resolve`, payload: {} });
      // team-a's service is older: it owns the name, and only its endpoints resolve.
      expect(res.json().service.endpoints.map((e: { address: string }) => e.address)).toEqual(['10.0.0.1']);
    } finally {
      for (const s of sources.values()) s.stop();
      await app.close();
    }
  });
});
