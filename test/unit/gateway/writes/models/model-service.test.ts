import { describe, expect, it } from 'vitest';
import { googleApis, ModelService } from '../../../../../src/gateway/grpc/services.js';
import { compileRule } from '../../../../../src/gateway/writes/api-method.js';
import { modelService } from '../../../../../src/gateway/writes/models/model-service.js';
import { OperationVerbs } from '../../../../../src/gateway/writes/operations/verbs.js';

const service = modelService(
  { client: {}, gate: {}, routing: {} } as never,
  {
    client: {},
    gate: {},
    verbs: new OperationVerbs(),
  } as never,
);

describe('ModelService as served', () => {
  it('serves the eight methods of the issue, each an rpc of the descriptor with a REST rule', () => {
    expect(service.methods.map((m) => m.name).sort()).toEqual([
      'DeleteModel',
      'DeleteModelVersion',
      'GetModel',
      'ListModelVersions',
      'ListModels',
      'MergeVersionAliases',
      'UpdateModel',
      'UploadModel',
    ]);
    for (const m of service.methods) {
      expect(ModelService.methods.some((d) => d.name === m.name)).toBe(true);
      expect(m.http.length).toBeGreaterThan(0);
      for (const rule of m.http) expect(() => compileRule(rule)).not.toThrow();
    }
  });

  it("answers operations with types Google's SDKs can unpack (all in the served descriptor set)", () => {
    for (const verb of service.verbs) {
      expect(googleApis.getMessage(verb.metadataType), verb.metadataType).toBeDefined();
      expect(googleApis.getMessage(verb.responseType), verb.responseType).toBeDefined();
    }
  });
});
