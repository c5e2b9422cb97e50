/**
 * The machine catalogue followed live, on the real control plane: edits of the ConfigMap are applied with
 * kubectl while one operator runs (no restart). A model waiting for its machine type deploys once an edit adds
 * it; a running model's Deployment is not touched by an edit, even of its own type; an edit that does not parse
 * is refused (an Event on the ConfigMap, the metric), the last good catalogue staying; a deleted ConfigMap is
 * the built-in catalogue. Shapes are small (100m–200m CPU): the simulated nodes are shared by the suites.
 */
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeWorkers, workqueueDepth } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import type { MachineCatalogue } from '../../../src/api/prediction/v1/machine-catalogue.js';
import { createTestNamespace, kubectl } from '../../support/cluster.js';
import { apply, eventually, getJson, readyOf, runOperatorWithCrds, waitReady, type TestOperator } from './harness.js';

const CONFIGMAP = 'machine-types';
const tiny = { cpu: '100m', memory: '128Mi' };

function catalogue(machineTypes: MachineCatalogue['machineTypes']): MachineCatalogue {
  return { defaultMachineType: 'x1-small', machineTypes, accelerators: {}, spot: {} };
}

function configMap(json: string): string {
  return yaml.dump({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CONFIGMAP },
    data: { 'machine-types.json': json },
  });
}

function model(name: string, id: string, machineType: string): string {
  return `
apiVersion: prediction.endpoint-operator.dev/v1
kind: DeployedModel
metadata: { name: ${name} }
spec:
  endpointRef: { name: catalogue }
  id: "${id}"
  model: projects/p/locations/l/models/${name}
  containerSpec: { imageUri: registry.example/server:1, ports: [{ containerPort: 9000 }] }
  dedicatedResources: { machineSpec: { machineType: ${machineType} }, minReplicaCount: 1 }
`;
}

interface Deployment {
  metadata: { generation?: number; annotations?: Record<string, string> };
  spec: { template: { spec: { containers: { resources: unknown }[] } } };
}

async function deployment(ns: string, name: string): Promise<Deployment> {
  return (await getJson(ns, `deployment/dm-${name}`)) as unknown as Deployment;
}

async function stalledReason(ns: string, name: string): Promise<{ reason?: string; message?: string } | undefined> {
  const conditions = ((await getJson(ns, `deployedmodel/${name}`)).status?.conditions ?? []) as {
    type: string;
    status: string;
    reason?: string;
    message?: string;
  }[];
  return conditions.find((c) => c.type === 'Stalled' && c.status === 'True');
}

async function configMapEvents(ns: string, reason: string): Promise<string[]> {
  const r = await kubectl([
    'get',
    'events',
    '-n',
    ns,
    '--field-selector',
    `involvedObject.kind=ConfigMap,involvedObject.name=${CONFIGMAP},reason=${reason}`,
    '-o',
    'json',
  ]);
  return (JSON.parse(r.stdout) as { items: { message: string }[] }).items.map((e) => e.message);
}

describe('the machine catalogue, followed live', () => {
  let ns: string;
  let op: TestOperator;

  /** Every reconcile queued so far has run: the DeployedModel controller's queue is empty and no worker is busy. */
  const modelsSettled = (): Promise<boolean> =>
    eventually(
      'the DeployedModel queue idle',
      async () =>
        (await metricValue(workqueueDepth, { name: `deployedmodel@${ns}` })) === 0 &&
        (await metricValue(activeWorkers, { controller: `deployedmodel@${ns}` })) === 0,
    );
  const lastLoadSuccessful = async (): Promise<number | undefined> =>
    (await op.operator.metrics.getSingleMetric('endpoint_operator_machine_catalogue_last_load_successful')?.get())
      ?.values[0]?.value;

  beforeAll(async () => {
    ns = await createTestNamespace('catalogue');
    await apply(ns, configMap(JSON.stringify(catalogue({ 'x1-small': tiny }))));
    op = await runOperatorWithCrds(ns, { machineCatalogueConfigMap: CONFIGMAP });
    await apply(
      ns,
      'apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: catalogue }\nspec: { displayName: Catalogue }\n',
    );
  });

  afterAll(async () => {
    // Namespaces are never deleted in this cluster: free the simulated nodes for the other suites.
    await kubectl(['delete', '-n', ns, 'deployedmodels', '--all', '--wait=false']);
    await kubectl(['delete', '-n', ns, 'deployments', '--all', '--wait=false']);
    await op?.stop();
  });

  it('deploys a model waiting for its machine type once an edit adds it, and rolls no running model, even when its own type changes', async () => {
    await apply(ns, model('small', '7100', 'x1-small') + '---' + model('tiny', '7200', 'x1-tiny'));
    await waitReady(ns, 'deployedmodel/small');
    const stalled = await eventually('tiny Stalled MachineTypeUnknown', async () => {
      const s = await stalledReason(ns, 'tiny');
      return s?.reason === 'MachineTypeUnknown' ? s : undefined;
    });
    expect(stalled.message).toContain('machine type "x1-tiny" is not in the machine catalogue (known: x1-small)');
    const before = await deployment(ns, 'small');

    // An edit that adds a type: no restart, the waiting model deploys.
    await apply(ns, configMap(JSON.stringify(catalogue({ 'x1-small': tiny, 'x1-tiny': tiny }))));
    await waitReady(ns, 'deployedmodel/tiny');
    expect((await deployment(ns, 'tiny')).spec.template.spec.containers[0]?.resources).toEqual({
      requests: tiny,
      limits: { memory: '128Mi' },
    });
    await modelsSettled();
    expect(await deployment(ns, 'small')).toMatchObject({
      metadata: { generation: before.metadata.generation },
      spec: { template: before.spec.template },
    });

    // An edit of the running model's own type: models created after it get the new shape; the running one keeps its pods.
    const bigger = { cpu: '200m', memory: '256Mi' };
    await apply(ns, configMap(JSON.stringify(catalogue({ 'x1-small': bigger, 'x1-tiny': tiny }))));
    await apply(ns, model('later', '7300', 'x1-small'));
    await waitReady(ns, 'deployedmodel/later');
    expect((await deployment(ns, 'later')).spec.template.spec.containers[0]?.resources).toEqual({
      requests: bigger,
      limits: { memory: '256Mi' },
    });
    await modelsSettled();
    const after = await deployment(ns, 'small');
    expect(after).toMatchObject({
      metadata: { generation: before.metadata.generation },
      spec: { template: before.spec.template },
    });
    expect(JSON.parse(after.metadata.annotations?.['prediction.endpoint-operator.dev/machine'] ?? '{}')).toMatchObject({
      resources: tiny,
    });
    expect(readyOf(await getJson(ns, 'deployedmodel/small'))?.status).toBe('True');
  }, 240_000);

  it('refuses an edit that does not parse: the last good catalogue stays, the ConfigMap and the metric say why', async () => {
    const good = catalogue({ 'x1-small': tiny, 'x1-tiny': tiny });
    await apply(ns, configMap(JSON.stringify(good)));
    await eventually('the good catalogue loaded', async () => (await lastLoadSuccessful()) === 1);

    await apply(
      ns,
      configMap(
        JSON.stringify(catalogue({ 'x1-small': tiny, 'x1-tiny': tiny, 'x1-huge': { cpu: 'lots', memory: '1Ti' } })),
      ),
    );
    const refused = await eventually('a MachineCatalogueInvalid Event', async () => {
      const messages = await configMapEvents(ns, 'MachineCatalogueInvalid');
      return messages.length > 0 ? messages : undefined;
    });
    expect(refused).toContain(
      'data[machine-types.json]: machineTypes.x1-huge.cpu: must be a Kubernetes quantity such as 4, 500m or 15Gi; the catalogue in effect is kept',
    );
    expect(await lastLoadSuccessful()).toBe(0);
    // The catalogue in effect is the last good one (x1-tiny is not in the built-in one).
    await apply(ns, model('kept', '7400', 'x1-tiny'));
    await waitReady(ns, 'deployedmodel/kept');

    await apply(ns, configMap('{"defaultMachineType": "x1-small",'));
    await eventually('a MachineCatalogueInvalid Event for bad JSON', async () =>
      (await configMapEvents(ns, 'MachineCatalogueInvalid')).some((m) =>
        m.startsWith('data[machine-types.json] is not JSON: '),
      ),
    );
    expect(await lastLoadSuccessful()).toBe(0);

    await apply(ns, configMap(JSON.stringify(good)));
    await eventually('the fix loaded', async () => (await lastLoadSuccessful()) === 1);
    expect(await configMapEvents(ns, 'MachineCatalogueLoaded')).toContain(
      'machine-types.json is in effect: 2 machine type(s), 0 accelerator type(s), default machine type x1-small',
    );
  }, 240_000);

  it('falls back to the built-in catalogue when the ConfigMap is deleted; running models go on', async () => {
    const before = await deployment(ns, 'tiny');
    const deleted = await kubectl(['delete', 'configmap', '-n', ns, CONFIGMAP]);
    expect(deleted.code, deleted.stderr).toBe(0);
    await apply(ns, model('orphan', '7500', 'x1-tiny'));
    const stalled = await eventually('orphan Stalled MachineTypeUnknown', async () => {
      const s = await stalledReason(ns, 'orphan');
      return s?.reason === 'MachineTypeUnknown' ? s : undefined;
    });
    expect(stalled.message).toContain(
      'machine type "x1-tiny" is not in the machine catalogue (known: a2-highgpu-1g, e2-standard-2',
    );
    await modelsSettled();
    expect(await deployment(ns, 'tiny')).toMatchObject({
      metadata: { generation: before.metadata.generation },
      spec: { template: before.spec.template },
    });
    expect(readyOf(await getJson(ns, 'deployedmodel/tiny'))?.status).toBe('True');
  }, 120_000);
});

describe('a machine catalogue that does not parse when the operator starts', () => {
  let ns: string;
  let op: TestOperator | undefined;

  afterAll(async () => {
    await kubectl(['delete', '-n', ns, 'deployedmodels', '--all', '--wait=false']);
    await kubectl(['delete', '-n', ns, 'deployments', '--all', '--wait=false']);
    await op?.stop();
  });

  it('does not stop the operator: no catalogue is in effect, models that need one wait until it is fixed', async () => {
    ns = await createTestNamespace('catalogue-start');
    await apply(ns, configMap('{"defaultMachineType": "x1-small", "machineTypes": {"x1-small": {"cpu": "one"}}}'));
    op = await runOperatorWithCrds(ns, { machineCatalogueConfigMap: CONFIGMAP });
    await apply(
      ns,
      'apiVersion: prediction.endpoint-operator.dev/v1\nkind: PredictionEndpoint\nmetadata: { name: catalogue }\nspec: { displayName: Catalogue }\n---' +
        model('first', '7600', 'x1-small'),
    );
    const stalled = await eventually('first Stalled MachineTypeUnknown', async () => {
      const s = await stalledReason(ns, 'first');
      return s?.reason === 'MachineTypeUnknown' ? s : undefined;
    });
    expect(stalled.message).toContain(
      `not serving yet: no machine catalogue is in effect: ConfigMap ${ns}/${CONFIGMAP} data[machine-types.json]: machineTypes.x1-small.cpu: must be a Kubernetes quantity such as 4, 500m or 15Gi; fix the ConfigMap's machine-types.json (the model is deployed as soon as it parses)`,
    );
    expect(await configMapEvents(ns, 'MachineCatalogueInvalid')).toContain(
      'data[machine-types.json]: machineTypes.x1-small.cpu: must be a Kubernetes quantity such as 4, 500m or 15Gi; no catalogue is in effect: DeployedModels that need one wait',
    );

    await apply(ns, configMap(JSON.stringify(catalogue({ 'x1-small': tiny }))));
    await waitReady(ns, 'deployedmodel/first');
  }, 120_000);
});
