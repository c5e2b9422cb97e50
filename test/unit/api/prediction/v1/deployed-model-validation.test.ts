import { describe, expect, it } from 'vitest';
import { dedicated, deployedModel, fields, validateModel } from './fixtures.js';

function errorsAt(spec: Record<string, unknown>): string[] {
  return fields(validateModel(deployedModel(spec)));
}

describe('DeployedModel validation', () => {
  it('accepts dedicated and automatic resources, with or without an id', () => {
    expect(validateModel(deployedModel())).toEqual({ errors: [], warnings: [] });
    expect(errorsAt({ id: '4712380917', displayName: 'xgb v3', enableAccessLogging: true })).toEqual([]);
    expect(errorsAt({ dedicatedResources: undefined, automaticResources: {} })).toEqual([]);
    expect(
      errorsAt({ dedicatedResources: undefined, automaticResources: { minReplicaCount: 1, maxReplicaCount: 1 } }),
    ).toEqual([]);
    const gpu = {
      machineSpec: { machineType: 'a2-highgpu-1g', acceleratorType: 'NVIDIA_TESLA_A100', acceleratorCount: 1 },
      minReplicaCount: 1,
      maxReplicaCount: 3,
    };
    expect(errorsAt({ dedicatedResources: gpu })).toEqual([]);
  });

  it('refuses non-objects and a missing spec', () => {
    for (const bad of [null, 1, 'dm', []]) expect(fields(validateModel(bad))).toEqual(['']);
    expect(fields(validateModel({}))).toEqual(['spec']);
  });

  it('requires spec.endpointRef.name, a DNS-1123 subdomain', () => {
    expect(errorsAt({ endpointRef: undefined })).toEqual(['spec.endpointRef']);
    expect(errorsAt({ endpointRef: {} })).toEqual(['spec.endpointRef.name']);
    expect(errorsAt({ endpointRef: { name: 'Fraud_Scoring' } })).toEqual(['spec.endpointRef.name']);
    expect(errorsAt({ endpointRef: { name: 'a'.repeat(254) } })).toContain('spec.endpointRef.name');
    expect(errorsAt({ endpointRef: { name: 'fraud.scoring-2' } })).toEqual([]);
  });

  it('requires spec.model as projects/*/locations/*/models/* with an optional @version', () => {
    expect(errorsAt({ model: undefined })).toEqual(['spec.model']);
    for (const good of [
      'projects/p/locations/l/models/m',
      'projects/p/locations/l/models/123@4',
      'projects/p/locations/l/models/m@default',
      'projects/p/locations/l/models/m@champion-v2',
    ]) {
      expect(errorsAt({ model: good }), good).toEqual([]);
    }
    for (const bad of [
      'm',
      'projects/p/models/m',
      'projects/p/locations/l/models/',
      'projects/p/locations/l/models/m@',
      'projects/p/locations/l/models/m@Champion',
      'projects/p/locations/l/models/m@v-',
      'projects/p/locations/l/models/m/versions/1',
    ]) {
      expect(errorsAt({ model: bad }), bad).toEqual(['spec.model']);
    }
  });

  it('takes spec.id as 1 to 10 digits', () => {
    expect(errorsAt({ id: '0' })).toEqual([]);
    expect(errorsAt({ id: '9999999999' })).toEqual([]);
    // "" in an optional string field means unset (the id is then assigned), as null does.
    expect(errorsAt({ id: '' })).toEqual([]);
    expect(errorsAt({ id: null })).toEqual([]);
    expect(errorsAt({ id: 'abc' })).toEqual(['spec.id']);
    expect(errorsAt({ id: 12 })).toEqual(['spec.id']);
    expect(new Set(errorsAt({ id: '12345678901' }))).toEqual(new Set(['spec.id']));
  });

  it('limits spec.displayName to 128 code points', () => {
    expect(errorsAt({ displayName: '🤖'.repeat(128) })).toEqual([]);
    expect(errorsAt({ displayName: '🤖'.repeat(129) })).toEqual(['spec.displayName']);
  });

  describe('resources', () => {
    it('needs exactly one of dedicatedResources and automaticResources', () => {
      expect(errorsAt({ dedicatedResources: undefined })).toEqual(['spec']);
      expect(errorsAt({ automaticResources: { minReplicaCount: 1 } })).toEqual(['spec.automaticResources']);
    });

    it('checks dedicated replica counts and the machine', () => {
      expect(errorsAt({ dedicatedResources: { ...dedicated, minReplicaCount: 0 } })).toEqual([
        'spec.dedicatedResources.minReplicaCount',
      ]);
      expect(errorsAt({ dedicatedResources: { machineSpec: dedicated.machineSpec } })).toEqual([
        'spec.dedicatedResources.minReplicaCount',
      ]);
      expect(errorsAt({ dedicatedResources: { ...dedicated, minReplicaCount: 1.5 } })).toEqual([
        'spec.dedicatedResources.minReplicaCount',
      ]);
      expect(errorsAt({ dedicatedResources: { ...dedicated, minReplicaCount: 3, maxReplicaCount: 2 } })).toEqual([
        'spec.dedicatedResources.maxReplicaCount',
      ]);
      expect(errorsAt({ dedicatedResources: { ...dedicated, minReplicaCount: 3, maxReplicaCount: 3 } })).toEqual([]);
      expect(errorsAt({ dedicatedResources: { ...dedicated, machineSpec: {} } })).toEqual([
        'spec.dedicatedResources.machineSpec.machineType',
      ]);
      expect(errorsAt({ dedicatedResources: { ...dedicated, machineSpec: { machineType: 'N1 standard' } } })).toEqual([
        'spec.dedicatedResources.machineSpec.machineType',
      ]);
      expect(
        errorsAt({
          dedicatedResources: { ...dedicated, machineSpec: { machineType: 'n1-standard-4', acceleratorCount: 2 } },
        }),
      ).toEqual(['spec.dedicatedResources.machineSpec.acceleratorType']);
    });

    it('refuses an autoscaling metric named twice', () => {
      const metric = { metricName: 'aiplatform.googleapis.com/prediction/online/cpu/utilization', target: 60 };
      expect(errorsAt({ dedicatedResources: { ...dedicated, autoscalingMetricSpecs: [metric, metric] } })).toEqual([
        'spec.dedicatedResources.autoscalingMetricSpecs[1].metricName',
      ]);
      expect(
        errorsAt({ dedicatedResources: { ...dedicated, autoscalingMetricSpecs: [{ ...metric, target: 0 }] } }),
      ).toEqual(['spec.dedicatedResources.autoscalingMetricSpecs[0].target']);
    });

    it('checks automatic replica counts', () => {
      const auto = (r: Record<string, unknown>): string[] =>
        errorsAt({ dedicatedResources: undefined, automaticResources: r });
      expect(auto({ minReplicaCount: 0 })).toEqual(['spec.automaticResources.minReplicaCount']);
      expect(auto({ maxReplicaCount: 0 })).toEqual(['spec.automaticResources.maxReplicaCount']);
      expect(auto({ minReplicaCount: 2, maxReplicaCount: 1 })).toEqual(['spec.automaticResources.maxReplicaCount']);
      expect(auto({ maxReplicaCount: 5 })).toEqual([]);
    });
  });
});

describe('DeployedModel immutability on update', () => {
  it('keeps spec.id: changing or removing it is refused', () => {
    const old = deployedModel({ id: '1001' });
    expect(validateModel(deployedModel({ id: '1001', displayName: 'renamed' }), old).errors).toEqual([]);
    expect(fields(validateModel(deployedModel({ id: '1002' }), old))).toEqual(['spec.id']);
    const removed = validateModel(deployedModel({ id: undefined }), old);
    expect(removed.errors).toMatchObject([{ field: 'spec.id', type: 'FieldValueForbidden' }]);
  });

  it('lets the user write down the id the operator assigned, and nothing else', () => {
    const old = deployedModel({}, { id: '4711' });
    expect(validateModel(deployedModel({ id: '4711' }), old).errors).toEqual([]);
    const other = validateModel(deployedModel({ id: '4712' }), old);
    expect(fields(other)).toEqual(['spec.id']);
    expect(other.errors[0]?.detail).toContain('"4711"');
    expect(fields(validateModel(deployedModel({ id: '4711' }), deployedModel()))).toEqual(['spec.id']);
  });

  it('keeps spec.endpointRef.name: moving a model is undeploy + deploy', () => {
    const old = deployedModel();
    expect(validateModel(deployedModel(), old).errors).toEqual([]);
    const moved = validateModel(deployedModel({ endpointRef: { name: 'other' } }), old);
    expect(fields(moved)).toEqual(['spec.endpointRef.name']);
    expect(moved.errors[0]?.detail).toMatch(/undeploy/);
  });

  it('ignores an old object it cannot read', () => {
    for (const old of [null, 'x', { spec: 3 }, { spec: { id: 7, endpointRef: 'x' } }]) {
      expect(validateModel(deployedModel(), old).errors).toEqual([]);
    }
  });
});
