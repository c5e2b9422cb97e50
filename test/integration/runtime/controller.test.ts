import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setCondition, type Condition } from '../../../src/runtime/conditions.js';
import { Action, Controller } from '../../../src/runtime/controller.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { Informer, kubeListerWatcher } from '../../../src/kube/informer.js';
import { statusWrites } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { StatusWriter } from '../../../src/runtime/status.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { ensureGadgetCrd, eventually, gadgets, GADGET_GROUP, testClient } from './helpers.js';

const KIND = 'GadgetControllerTest';

interface Gadget extends KubeObject {
  spec?: { size?: number };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

describe('a controller on the real apiserver', () => {
  let client: KubeClient;
  let ns: string;
  const stop = new AbortController();
  let informer: Informer<Gadget>;
  let running: Promise<void[]>;
  let reconciles = 0;

  beforeAll(async () => {
    await ensureGadgetCrd();
    client = testClient();
    ns = await createTestNamespace('rt-controller');
    informer = new Informer<Gadget>(kubeListerWatcher<Gadget>(client, gadgets, ns), { name: 'gadgets-it' });
    const writer = new StatusWriter({ client, ref: gadgets, kind: KIND, fieldManager: 'endpoint-operator-test' });
    const controller = new Controller<Gadget>({
      name: 'gadget-it',
      kind: 'Gadget',
      primary: informer,
      reconcile: async ({ namespace, name }) => {
        reconciles++;
        const gadget = informer.get(namespace, name);
        if (!gadget) return Action.done(); // deleted: nothing to clean up
        const size = gadget.spec?.size ?? 0;
        await writer.update(gadget, (current) => ({
          observedGeneration: current.metadata.generation,
          conditions: setCondition(
            current.status?.conditions,
            size > 0
              ? {
                  type: 'Ready',
                  status: 'True',
                  reason: 'Reconciled',
                  message: `size ${size}`,
                  observedGeneration: current.metadata.generation ?? 0,
                }
              : {
                  type: 'Ready',
                  status: 'False',
                  reason: 'InvalidSpec',
                  message: 'spec.size: must be positive; set spec.size to 1 or more',
                  observedGeneration: current.metadata.generation ?? 0,
                },
            new Date(),
          ),
        }));
        return Action.done();
      },
    });
    running = Promise.all([informer.run(stop.signal), controller.run(stop.signal)]);
  });

  afterAll(async () => {
    stop.abort();
    await running;
    client.close();
  });

  const gadgetYaml = (name: string, size: number): string =>
    `apiVersion: ${GADGET_GROUP}/v1\nkind: Gadget\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  size: ${size}\n`;

  it('drives status to Ready so that kubectl wait works, and settles: its own status write causes no further write', async () => {
    const w0 = await metricValue(statusWrites, { kind: KIND });
    expect((await kubectl(['apply', '-f', '-'], { input: gadgetYaml('g1', 3) })).code).toBe(0);
    const waited = await kubectl([
      'wait',
      '--for=condition=Ready',
      '--timeout=30s',
      '-n',
      ns,
      `gadgets.${GADGET_GROUP}/g1`,
    ]);
    expect(waited.code, waited.stderr).toBe(0);
    // The write produced a MODIFIED event and one more reconcile, which found nothing to change.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await metricValue(statusWrites, { kind: KIND })).toBe(w0 + 1);
    expect(informer.hasSynced()).toBe(true);
  });

  it('reflects a spec change in the condition, keeping one write per real change', async () => {
    const w0 = await metricValue(statusWrites, { kind: KIND });
    expect((await kubectl(['apply', '-f', '-'], { input: gadgetYaml('g1', 0) })).code).toBe(0);
    const g = await eventually('Ready=False', async () => {
      const obj = await client.get<Gadget>(gadgets, ns, 'g1');
      return obj?.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False') ? obj : undefined;
    });
    expect(g.status?.observedGeneration).toBe(2);
    expect(g.status?.conditions?.[0]?.reason).toBe('InvalidSpec');
    await new Promise((r) => setTimeout(r, 1000));
    expect(await metricValue(statusWrites, { kind: KIND })).toBe(w0 + 1);
    const before = reconciles;
    expect((await kubectl(['delete', '-n', ns, `gadgets.${GADGET_GROUP}/g1`])).code).toBe(0);
    await eventually('a reconcile of the deleted object', () => reconciles > before);
  });
});
