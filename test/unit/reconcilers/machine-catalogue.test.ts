import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import { DEFAULT_MACHINE_CATALOGUE, loadMachineCatalogue } from '../../../src/reconcilers/serving/machine-catalogue.js';

function clientHolding(data: Record<string, string> | undefined): { client: KubeClient; asked: string[] } {
  const asked: string[] = [];
  const client = {
    get: async (_ref: unknown, namespace: string, name: string) => {
      asked.push(`${namespace}/${name}`);
      return data === undefined ? undefined : { metadata: { name }, data };
    },
  } as unknown as KubeClient;
  return { client, asked };
}

describe('loadMachineCatalogue', () => {
  it('reads the ConfigMap key machine-types.json', async () => {
    const own = { ...DEFAULT_MACHINE_CATALOGUE, machineTypes: { 'x1-small': { cpu: '500m', memory: '1Gi' } } };
    const { client, asked } = clientHolding({ 'machine-types.json': JSON.stringify(own) });
    expect(await loadMachineCatalogue(client, 'ops', 'types')).toEqual({ catalogue: own, source: 'configmap' });
    expect(asked).toEqual(['ops/types']);
  });

  it('falls back to the built-in catalogue, saying why, when the ConfigMap does not exist', async () => {
    expect(await loadMachineCatalogue(clientHolding(undefined).client, 'ops', 'types')).toEqual({ catalogue: DEFAULT_MACHINE_CATALOGUE, source: 'built-in', why: 'ConfigMap ops/types not found' });
  });

  it('refuses a catalogue that does not parse, naming the key and the field', async () => {
    await expect(loadMachineCatalogue(clientHolding({}).client, 'ops', 'types')).rejects.toThrow('ConfigMap ops/types data[machine-types.json] is missing');
    await expect(loadMachineCatalogue(clientHolding({ 'machine-types.json': '{' }).client, 'ops', 'types')).rejects.toThrow(/is not JSON/);
    const bad = { ...DEFAULT_MACHINE_CATALOGUE, machineTypes: { 'x1-small': { cpu: 'lots', memory: '1Gi' } } };
    await expect(loadMachineCatalogue(clientHolding({ 'machine-types.json': JSON.stringify(bad) }).client, 'ops', 'types')).rejects.toThrow('machineTypes.x1-small.cpu: must be a Kubernetes quantity');
  });
});
