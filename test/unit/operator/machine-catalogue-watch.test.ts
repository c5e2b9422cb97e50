import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MachineCatalogueWatch } from '../../../src/operator/machine-catalogue-watch.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { metricsRegistry } from '../../../src/base/metrics.js';
import { DEFAULT_MACHINE_CATALOGUE, type MachineCatalogue } from '../../../src/api/prediction/v1/machine-catalogue.js';

const small: MachineCatalogue = {
  ...DEFAULT_MACHINE_CATALOGUE,
  machineTypes: { 'x1-small': { cpu: '500m', memory: '1Gi' } },
};
const larger: MachineCatalogue = {
  ...small,
  machineTypes: { ...small.machineTypes, 'x1-large': { cpu: '2', memory: '4Gi' } },
};

function configMap(data: Record<string, string>, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { name: 'types', namespace: 'ops', uid: 'cm-1', labels }, data } as KubeObject;
}
const holding = (c: MachineCatalogue, labels?: Record<string, string>): KubeObject =>
  configMap({ 'machine-types.json': JSON.stringify(c) }, labels);

function watch(): {
  source: MachineCatalogueWatch;
  events: string[];
  logs: Record<string, unknown>[];
  changes: () => number;
} {
  const events: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'info' },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const source = new MachineCatalogueWatch({
    namespace: 'ops',
    name: 'types',
    log,
    events: {
      record: async (o, type, reason, message) => {
        events.push(`${o.apiVersion ?? ''}/${o.kind ?? ''} ${o.metadata.name ?? ''} ${type} ${reason}: ${message}`);
        return true;
      },
    },
  });
  let n = 0;
  source.onChange(() => n++);
  return { source, events, logs, changes: () => n };
}

async function lastLoadSuccessful(): Promise<number | undefined> {
  const metric = await metricsRegistry
    .getSingleMetric('endpoint_operator_machine_catalogue_last_load_successful')
    ?.get();
  return metric?.values[0]?.value;
}

describe('MachineCatalogueWatch', () => {
  it('puts a catalogue that parses in effect, says so on the ConfigMap, and tells the shards only when it changed', async () => {
    const w = watch();
    w.source.onAdd(holding(small));
    expect(w.source.current()).toEqual({ catalogue: small });
    expect(w.changes()).toBe(1);
    expect(w.events).toEqual([
      'v1/ConfigMap types Normal MachineCatalogueLoaded: machine-types.json is in effect: 1 machine type(s), 6 accelerator type(s), default machine type n1-standard-2',
    ]);
    // A label edit (or a relist) brings nothing new: no re-enqueue, no event.
    w.source.onUpdate(holding(small), holding(small, { team: 'platform' }));
    expect(w.changes()).toBe(1);
    expect(w.events).toHaveLength(1);
    w.source.onUpdate(holding(small), holding(larger));
    expect(w.source.current()).toEqual({ catalogue: larger });
    expect(w.changes()).toBe(2);
    expect(await lastLoadSuccessful()).toBe(1);
  });

  it('refuses an edit that does not parse: keeps the catalogue in effect and reports the key and the first problem', async () => {
    const w = watch();
    w.source.onAdd(holding(small));
    w.source.onUpdate(
      holding(small),
      configMap({
        'machine-types.json': JSON.stringify({
          ...small,
          machineTypes: { 'x1-small': { cpu: 'lots', memory: '1Gi' } },
        }),
      }),
    );
    expect(w.source.current()).toEqual({ catalogue: small });
    expect(w.changes()).toBe(1);
    const problem =
      'data[machine-types.json]: machineTypes.x1-small.cpu: must be a Kubernetes quantity such as 4, 500m or 15Gi';
    expect(w.events[1]).toBe(
      `v1/ConfigMap types Warning MachineCatalogueInvalid: ${problem}; the catalogue in effect is kept`,
    );
    expect(w.logs.at(-1)).toMatchObject({
      level: 50,
      configMap: 'ops/types',
      key: 'machine-types.json',
      problem,
      msg: 'machine catalogue: ConfigMap ops/types refused; the catalogue in effect is kept',
    });
    expect(await lastLoadSuccessful()).toBe(0);

    // The fix is news even when it restores the catalogue in effect: the refusal is over.
    w.source.onUpdate(holding(small), holding(small));
    expect(await lastLoadSuccessful()).toBe(1);
    expect(w.events[2]).toMatch(/Normal MachineCatalogueLoaded/);
    expect(w.changes()).toBe(1);
  });

  it('falls back to the built-in catalogue when the ConfigMap is deleted, or absent once listed', () => {
    const w = watch();
    w.source.onAdd(holding(small));
    w.source.onDelete();
    expect(w.source.current()).toEqual({ catalogue: DEFAULT_MACHINE_CATALOGUE });
    expect(w.changes()).toBe(2);
    expect(w.logs.at(-1)).toMatchObject({
      level: 40,
      msg: 'machine catalogue: ConfigMap ops/types was deleted; using the built-in catalogue',
    });

    const absent = watch();
    expect(absent.source.current().catalogue).toBeUndefined();
    absent.source.synced();
    expect(absent.source.current()).toEqual({ catalogue: DEFAULT_MACHINE_CATALOGUE });
    expect(absent.logs.at(-1)).toMatchObject({
      level: 40,
      msg: 'machine catalogue: ConfigMap ops/types not found; using the built-in catalogue',
    });
  });

  it('starts with no catalogue when the ConfigMap does not parse at start-up (not the built-in one), until it does', () => {
    const w = watch();
    w.source.onAdd(configMap({ 'machine-types.json': '{"defaultMachineType":' }));
    w.source.synced();
    const now = w.source.current();
    expect(now.catalogue).toBeUndefined();
    expect(now.problem).toMatch(/^ConfigMap ops\/types data\[machine-types\.json\] is not JSON: /);
    expect(w.events[0]).toMatch(
      /Warning MachineCatalogueInvalid: data\[machine-types\.json\] is not JSON: .*; no catalogue is in effect: DeployedModels that need one wait$/,
    );
    expect(w.changes()).toBe(0);
    w.source.onUpdate(configMap({}), holding(small));
    expect(w.source.current()).toEqual({ catalogue: small });
    expect(w.changes()).toBe(1);
  });
});
