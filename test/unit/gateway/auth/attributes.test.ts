import { describe, expect, it } from 'vitest';
import {
  accessAttributes,
  attributesKey,
  CALL_RULES,
  permissionDeniedMessage,
} from '../../../../src/gateway/auth/attributes.js';
import { namespaceReader, predictionTarget } from '../../../../src/gateway/auth/targets.js';

describe('call → access attributes (the issue table)', () => {
  const target = { namespace: 'endpoint-demo', name: 'fraud-scoring' };
  it('maps every call to its verb and resource', () => {
    expect(
      Object.fromEntries(Object.entries(CALL_RULES).map(([call, r]) => [call, `${r.verb} ${r.resource}.${r.group}`])),
    ).toEqual({
      predict: 'predict predictionendpoints.prediction.endpoint-operator.dev',
      rawPredict: 'predict predictionendpoints.prediction.endpoint-operator.dev',
      streamRawPredict: 'predict predictionendpoints.prediction.endpoint-operator.dev',
      explain: 'explain predictionendpoints.prediction.endpoint-operator.dev',
      getEndpoint: 'get predictionendpoints.prediction.endpoint-operator.dev',
      listPredictionEndpoints: 'list predictionendpoints.prediction.endpoint-operator.dev',
      resolve: 'resolve registryservices.registry.endpoint-operator.dev',
      getService: 'get registryservices.registry.endpoint-operator.dev',
      listEndpoints: 'list registryendpoints.registry.endpoint-operator.dev',
      getModel: 'get models.prediction.endpoint-operator.dev',
      listModels: 'list models.prediction.endpoint-operator.dev',
      createModel: 'create models.prediction.endpoint-operator.dev',
      patchModel: 'patch models.prediction.endpoint-operator.dev',
      deleteModel: 'delete models.prediction.endpoint-operator.dev',
      createPredictionEndpoint: 'create predictionendpoints.prediction.endpoint-operator.dev',
      patchPredictionEndpoint: 'patch predictionendpoints.prediction.endpoint-operator.dev',
      deletePredictionEndpoint: 'delete predictionendpoints.prediction.endpoint-operator.dev',
      createDeployedModel: 'create deployedmodels.prediction.endpoint-operator.dev',
      patchDeployedModel: 'patch deployedmodels.prediction.endpoint-operator.dev',
      deleteDeployedModel: 'delete deployedmodels.prediction.endpoint-operator.dev',
    });
  });
  it('refuses a write naming the verb, resource, namespace and the model-deployer role', () => {
    const m = permissionDeniedMessage('createModel', 'projects/endpoint-demo/locations/l/models/iris', {
      namespace: 'endpoint-demo',
      name: 'iris',
    });
    for (const part of [
      'verb "create"',
      'models/iris',
      'namespace "endpoint-demo"',
      'endpoint-operator-model-deployer',
    ])
      expect(m).toContain(part);
  });
  it('names the object for named calls and only the namespace for list', () => {
    expect(accessAttributes('predict', target)).toEqual({
      resource: {
        verb: 'predict',
        group: 'prediction.endpoint-operator.dev',
        resource: 'predictionendpoints',
        namespace: 'endpoint-demo',
        name: 'fraud-scoring',
      },
    });
    expect(accessAttributes('listEndpoints', target)).toEqual({
      resource: {
        verb: 'list',
        group: 'registry.endpoint-operator.dev',
        resource: 'registryendpoints',
        namespace: 'endpoint-demo',
      },
    });
    expect(accessAttributes('metrics', undefined)).toEqual({ nonResource: { verb: 'get', path: '/metrics' } });
    expect(attributesKey(accessAttributes('predict', target))).not.toBe(
      attributesKey(accessAttributes('explain', target)),
    );
  });
  it('refuses with the verb, resource, namespace, name and the role that grants it', () => {
    const m = permissionDeniedMessage('explain', 'projects/endpoint-demo/locations/l/endpoints/fraud-scoring', target);
    for (const part of [
      'explain',
      'predictionendpoints/fraud-scoring',
      'namespace "endpoint-demo"',
      'prediction.endpoint-operator.dev',
      'endpoint-operator-prediction-caller',
      '(or it may not exist)',
    ])
      expect(m).toContain(part);
  });
});

describe('namespaceReader (the --project template read backwards)', () => {
  it('reads the default template {namespace}', () => {
    const read = namespaceReader('{namespace}');
    expect(read('endpoint-demo')).toBe('endpoint-demo');
    expect(read('Not_A_Namespace')).toBeUndefined();
  });
  it('reads a template with a prefix, and refuses projects that do not fit', () => {
    const read = namespaceReader('acme-{namespace}');
    expect(read('acme-team-a')).toBe('team-a');
    expect(read('other-team-a')).toBeUndefined();
    expect(predictionTarget(read, 'acme-team-a', 'fraud')).toEqual({ namespace: 'team-a', name: 'fraud' });
    expect(predictionTarget(read, 'x', 'fraud')).toBeUndefined();
  });
});
