import { describe, expect, it } from 'vitest';
import { deployedModel, validateModel } from './fixtures.js';

const container = { imageUri: 'europe-docker.pkg.dev/p/r/server:1', predictRoute: '/predict', healthRoute: '/health' };
const machine = { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 2 };

function errors(
  spec: Record<string, unknown>,
  oldSpec?: Record<string, unknown>,
): { field: string; type: string; detail: string; value: unknown }[] {
  const result = validateModel(deployedModel(spec), oldSpec === undefined ? undefined : deployedModel(oldSpec));
  return result.errors.map((e) => ({ field: e.field, type: e.type, detail: e.detail, value: e.value }));
}

describe('DeployedModel serving fields', () => {
  it('accepts a containerSpec with Vertex probes, a deploymentTimeout up to 2 h and requiredReplicaCount up to min', () => {
    const spec = {
      containerSpec: {
        ...container,
        deploymentTimeout: '7200s',
        startupProbe: { httpGet: { path: '/health' }, periodSeconds: 5 },
        livenessProbe: { tcpSocket: {} },
        sharedMemorySizeMb: 256,
      },
      artifactUri: 'gs://b/m/1',
      dedicatedResources: {
        ...machine,
        requiredReplicaCount: 2,
        spot: true,
        autoscalingMetricSpecs: [
          { metricName: 'aiplatform.googleapis.com/prediction/online/cpu/utilization', target: 60 },
        ],
      },
    };
    expect(errors(spec)).toEqual([]);
  });

  it('refuses containerSpec together with backend, naming the field and the rule', () => {
    const found = errors({
      containerSpec: container,
      backend: { service: { name: 's', port: 80 }, protocol: 'KServeV1', modelName: 'm' },
    });
    expect(found).toEqual([
      expect.objectContaining({
        field: 'spec.containerSpec',
        type: 'FieldValueForbidden',
        detail: expect.stringContaining('may not be set together with spec.backend'),
      }),
    ]);
  });

  it('refuses a deploymentTimeout above 7200s, two probe handlers, requiredReplicaCount above min and a metric Vertex does not scale on', () => {
    expect(errors({ containerSpec: { ...container, deploymentTimeout: '7201s' } })).toEqual([
      {
        field: 'spec.containerSpec.deploymentTimeout',
        type: 'FieldValueInvalid',
        value: '7201s',
        detail: 'must be at most 7200s (2 hours)',
      },
    ]);
    expect(errors({ containerSpec: { ...container, deploymentTimeout: '30m' } }).map((e) => e.field)).toEqual([
      'spec.containerSpec.deploymentTimeout',
    ]);
    expect(
      errors({ containerSpec: { ...container, healthProbe: { exec: { command: ['true'] }, tcpSocket: {} } } }).map(
        (e) => e.field,
      ),
    ).toEqual(['spec.containerSpec.healthProbe']);
    expect(errors({ containerSpec: container, dedicatedResources: { ...machine, requiredReplicaCount: 3 } })).toEqual([
      {
        field: 'spec.dedicatedResources.requiredReplicaCount',
        type: 'FieldValueInvalid',
        value: 3,
        detail: 'must be at most minReplicaCount (2)',
      },
    ]);
    expect(
      errors({
        containerSpec: container,
        dedicatedResources: { ...machine, autoscalingMetricSpecs: [{ metricName: 'memory' }] },
      }).map((e) => [e.field, e.value]),
    ).toEqual([['spec.dedicatedResources.autoscalingMetricSpecs[0].metricName', 'memory']]);
  });

  it('makes containerSpec, artifactUri and machineSpec immutable, saying how to roll out a new version; replica counts stay mutable', () => {
    const before = { containerSpec: container, artifactUri: 'gs://b/m/1', dedicatedResources: machine };
    expect(
      errors({ ...before, dedicatedResources: { ...machine, minReplicaCount: 3, maxReplicaCount: 5 } }, before),
    ).toEqual([]);
    const changed = errors(
      { ...before, containerSpec: { ...container, imageUri: 'europe-docker.pkg.dev/p/r/server:2' } },
      before,
    );
    expect(changed).toEqual([expect.objectContaining({ field: 'spec.containerSpec', type: 'FieldValueInvalid' })]);
    expect(changed[0]?.detail).toMatch(
      /^is immutable; to roll out a new version, create a new DeployedModel .* spec\.trafficSplit/,
    );
    expect(errors({ ...before, artifactUri: 'gs://b/m/2' }, before)).toEqual([
      expect.objectContaining({
        field: 'spec.artifactUri',
        value: 'gs://b/m/2',
        detail: expect.stringContaining('(it is "gs://b/m/1")'),
      }),
    ]);
    expect(
      errors(
        { ...before, dedicatedResources: { ...machine, machineSpec: { machineType: 'n1-standard-8' } } },
        before,
      ).map((e) => e.field),
    ).toEqual(['spec.dedicatedResources.machineSpec']);
    expect(errors({ dedicatedResources: machine }, before).map((e) => [e.field, e.type])).toEqual([
      ['spec.containerSpec', 'FieldValueForbidden'],
      ['spec.artifactUri', 'FieldValueForbidden'],
    ]);
    expect(errors(before, { dedicatedResources: machine }).map((e) => e.field)).toEqual([
      'spec.containerSpec',
      'spec.artifactUri',
    ]);
  });
});
