import { describe, expect, it } from 'vitest';
import type { DeployedModelSpec } from '../../../../src/api/prediction/v1/deployed-model-schema.js';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';
import {
  DEFAULT_MACHINE_CATALOGUE,
  type MachineCatalogue,
} from '../../../../src/api/prediction/v1/machine-catalogue.js';
import {
  MACHINE_ANNOTATION,
  machineFor,
  pinnedMachine,
  withMachinePin,
  type Machine,
} from '../../../../src/reconcilers/serving/machine-pin.js';
import { resolveMachine } from '../../../../src/reconcilers/serving/serving-plan.js';

const gpuSpot: DeployedModelSpec = {
  dedicatedResources: {
    machineSpec: { machineType: 'n1-standard-4', acceleratorType: 'NVIDIA_TESLA_T4', acceleratorCount: 1 },
    minReplicaCount: 1,
    spot: true,
  },
} as DeployedModelSpec;
const plain: DeployedModelSpec = {
  dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1 },
} as DeployedModelSpec;

function resolved(spec: DeployedModelSpec, catalogue: MachineCatalogue = DEFAULT_MACHINE_CATALOGUE): Machine {
  const r = resolveMachine(spec, catalogue);
  if (!r.ok) throw new Error(r.message);
  return r;
}

/** The Deployment the operator would have created with `machine`. */
function deploymentWith(machine: Machine): KubeObject {
  return withMachinePin(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'dm-x', annotations: { 'deployment.kubernetes.io/revision': '1' } },
    },
    machine,
  );
}

describe('the machine recorded on a Deployment', () => {
  it('is written next to other annotations and read back unchanged, to the byte (an unchanged record is no apply)', () => {
    const machine = resolved(gpuSpot);
    const deployment = deploymentWith(machine);
    expect(deployment.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    expect(pinnedMachine(deployment)).toEqual(machine);
    expect(
      withMachinePin(deployment, pinnedMachine(deployment) ?? machine).metadata.annotations?.[MACHINE_ANNOTATION],
    ).toBe(deployment.metadata.annotations?.[MACHINE_ANNOTATION]);
  });

  it('is absent without a Deployment, without the annotation, or with one edited out of shape', () => {
    expect(pinnedMachine(undefined)).toBeUndefined();
    expect(pinnedMachine({ metadata: { name: 'dm-x' } })).toBeUndefined();
    expect(pinnedMachine({ metadata: { name: 'dm-x', annotations: { [MACHINE_ANNOTATION]: '{' } } })).toBeUndefined();
    expect(
      pinnedMachine({ metadata: { name: 'dm-x', annotations: { [MACHINE_ANNOTATION]: '{"resources":{"cpu":4}}' } } }),
    ).toBeUndefined();
  });
});

describe('machineFor', () => {
  const grown: MachineCatalogue = {
    ...DEFAULT_MACHINE_CATALOGUE,
    machineTypes: { ...DEFAULT_MACHINE_CATALOGUE.machineTypes, 'n1-standard-4': { cpu: '3500m', memory: '14Gi' } },
  };

  it('places a model without a Deployment by the catalogue in effect', () => {
    expect(machineFor(plain, { catalogue: grown }, undefined)).toMatchObject({
      ok: true,
      resources: { cpu: '3500m', memory: '14Gi' },
    });
  });

  it('keeps a running model on the machine its Deployment was created with, whatever the catalogue says now', () => {
    const deployment = deploymentWith(resolved(plain));
    expect(machineFor(plain, { catalogue: grown }, deployment)).toMatchObject({
      ok: true,
      resources: { cpu: '4', memory: '15Gi' },
    });
    const without: MachineCatalogue = { ...DEFAULT_MACHINE_CATALOGUE, machineTypes: {} };
    expect(machineFor(plain, { catalogue: without }, deployment)).toMatchObject({
      ok: true,
      resources: { cpu: '4', memory: '15Gi' },
    });
    expect(
      machineFor(
        plain,
        { catalogue: undefined, problem: 'ConfigMap ops/types data[machine-types.json] is missing' },
        deployment,
      ),
    ).toMatchObject({ ok: true });
  });

  it('takes the catalogue for a Deployment an older operator wrote without the record', () => {
    expect(machineFor(plain, { catalogue: grown }, { metadata: { name: 'dm-x' } })).toMatchObject({
      ok: true,
      resources: { cpu: '3500m' },
    });
  });

  it('says why when no catalogue is in effect, naming the ConfigMap problem and the fix', () => {
    expect(
      machineFor(
        plain,
        { catalogue: undefined, problem: 'ConfigMap ops/types data[machine-types.json] is not JSON: oops' },
        undefined,
      ),
    ).toEqual({
      ok: false,
      message:
        "no machine catalogue is in effect: ConfigMap ops/types data[machine-types.json] is not JSON: oops; fix the ConfigMap's machine-types.json (the model is deployed as soon as it parses)",
    });
  });
});
