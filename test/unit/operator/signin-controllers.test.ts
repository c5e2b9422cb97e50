import { afterEach, describe, expect, it } from 'vitest';
import { flushMicrotasks } from '../../support/manual-clock.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { KubernetesIdentityDirectory } from '../../../src/signin/kube/directory.js';
import { signInControllers } from '../../../src/operator/signin-controllers.js';
import { RecordingApi, recordingEvents } from '../reconcilers/recording-api.js';
import { passwordHash } from '../signin/fixtures.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

const obj = (
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  extra: Partial<KubeObject> = {},
): KubeObject => ({
  apiVersion: kind === 'Secret' ? 'v1' : 'pos.endpoint-operator.dev/v1',
  kind,
  metadata: { name, namespace: 'ns', generation: 1 },
  ...(kind === 'Secret' ? {} : { spec }),
  ...extra,
});
const user = (name: string, email: string, shops: string[]) =>
  obj('ShopUser', name, {
    email,
    displayName: name,
    passwordSecretRef: { name: `${name}-pw`, key: 'password' },
    memberships: shops.map((shop) => ({ shop, role: 'cashier' })),
  });
const secretFor = async (name: string) =>
  obj('Secret', `${name}-pw`, {}, { data: { password: Buffer.from(await passwordHash()).toString('base64') } });

/** The three sign-in controllers on a recording API, as the operator's leader runs them (operator/start.ts). */
async function run(api: RecordingApi) {
  const { recorder, events } = recordingEvents();
  const directory = new KubernetesIdentityDirectory({ client: api.client(), namespace: 'ns' });
  const stop = new AbortController();
  const synced = directory.start(stop.signal);
  const controllers = signInControllers({ client: api.client(), directory, events: recorder });
  const runs = controllers.map((c) => c.run(stop.signal));
  stops.push(async () => {
    stop.abort();
    await Promise.all(runs);
  });
  await synced;
  return { events };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 30; i++) {
    await flushMicrotasks();
    await new Promise((r) => setImmediate(r));
  }
}

const ready = (o: KubeObject | undefined) =>
  (o?.status as { conditions?: Array<{ type: string; status: string; reason: string }> } | undefined)?.conditions?.find(
    (c) => c.type === 'Ready',
  );

describe('sign-in status controllers on a recording API', { timeout: 30_000 }, () => {
  it('report a missing Shop, then Ready when it appears (a Shop watch), with one Event per transition and no write loop', async () => {
    const api = new RecordingApi();
    api.create('secrets', await secretFor('ana'));
    api.create('shopusers', user('ana', 'ana@example.com', ['lisbon']));
    const { events } = await run(api);
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'ana'))).toMatchObject({ status: 'False', reason: 'ShopNotFound' });
    api.create('shops', obj('Shop', 'lisbon', { displayName: 'Lisbon', code: 'LIS' }));
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'ana'))).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(ready(api.object('shops', 'ns', 'lisbon'))).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(events[0]).toBe('Warning ShopNotFound ana');
    expect(events.slice(1).sort()).toEqual(['Normal Reconciled ana', 'Normal Reconciled lisbon']);
    const writes = api.calls.filter((c) => c.startsWith('patch status')).length;
    await settle();
    expect(api.calls.filter((c) => c.startsWith('patch status')).length).toBe(writes);
    expect(writes).toBe(3);
  });

  it('mark both holders of an email DuplicateEmail across kinds, and clear it when one goes', async () => {
    const api = new RecordingApi();
    api.create('shops', obj('Shop', 'lisbon', { displayName: 'Lisbon', code: 'LIS' }));
    api.create('secrets', await secretFor('ana'));
    api.create('shopusers', user('ana', 'ana@example.com', ['lisbon']));
    await run(api);
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'ana'))).toMatchObject({ status: 'True' });
    api.create(
      'adminusers',
      obj('AdminUser', 'ana-admin', {
        email: 'ana@example.com',
        name: 'Ana',
        role: 'support',
        passwordSecretRef: { name: 'ana-pw', key: 'password' },
      }),
    );
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'ana'))).toMatchObject({ status: 'False', reason: 'DuplicateEmail' });
    expect(ready(api.object('adminusers', 'ns', 'ana-admin'))).toMatchObject({
      status: 'False',
      reason: 'DuplicateEmail',
    });
    api.delete('adminusers', 'ns', 'ana-admin');
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'ana'))).toMatchObject({ status: 'True', reason: 'Reconciled' });
  });

  it('follow the password Secret: SecretNotFound until it exists', async () => {
    const api = new RecordingApi();
    api.create('shops', obj('Shop', 'lisbon', { displayName: 'Lisbon', code: 'LIS' }));
    api.create('shopusers', user('bo', 'bo@example.com', ['lisbon']));
    await run(api);
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'bo'))).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    api.create('secrets', await secretFor('bo'));
    await settle();
    expect(ready(api.object('shopusers', 'ns', 'bo'))).toMatchObject({ status: 'True', reason: 'Reconciled' });
  });
});
