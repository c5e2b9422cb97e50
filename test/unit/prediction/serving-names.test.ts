import { describe, expect, it } from 'vitest';
import { containerBackend, servingName } from '../../../src/api/prediction/v1/serving-names.js';

describe('containerBackend', () => {
  it('routes a KServeV1 or OpenInferenceV2 container through the Service the operator creates, port http', () => {
    expect(containerBackend('churn', { imageUri: 'i', protocol: 'KServeV1' })).toEqual({ backend: { service: { name: 'dm-churn', port: 'http' }, protocol: 'KServeV1', modelName: 'churn' } });
    expect(containerBackend('churn.v3', { imageUri: 'i', protocol: 'OpenInferenceV2', modelName: 'xgb' })).toEqual({
      backend: { service: { name: servingName('churn.v3'), port: 'http' }, protocol: 'OpenInferenceV2', modelName: 'xgb' },
    });
  });

  it('says that the Vertex protocol (the default) is not routed yet, rather than guessing a path', () => {
    expect(containerBackend('churn', { imageUri: 'i' })).toEqual({ unusable: expect.stringContaining('spec.containerSpec.protocol is Vertex, which the gateway does not route yet') });
  });
});
