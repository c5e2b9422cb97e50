import { describe, expect, it } from 'vitest';
import {
  operationName,
  operationStamp,
  parseOperationName,
  stampedOperation,
} from '../../../../../src/gateway/writes/operations/operation-name.js';

const resource = 'projects/team-a/locations/europe-west4/models/iris';

describe('operation names', () => {
  it('round-trips what to watch in one URL-safe segment under the resource', () => {
    const ref = { resource, verb: 'upload', generation: 3, manager: 'vertex-api/alice', extra: { versionId: '2' } };
    const name = operationName(ref);
    expect(name).toMatch(/^projects\/team-a\/locations\/europe-west4\/models\/iris\/operations\/[A-Za-z0-9_-]+$/);
    expect(parseOperationName(name)).toEqual(ref);
    const del = { resource: 'projects/p/locations/l/endpoints/e', verb: 'deploy', object: 'e-12', uid: 'u-1' };
    expect(parseOperationName(operationName(del))).toEqual(del);
  });

  it('refuses names it did not issue, naming the field', () => {
    for (const bad of [
      `${resource}/operations/123`,
      `${resource}/operations/${Buffer.from('{"v":1}').toString('base64url')}`,
      `${resource}/operations/${Buffer.from('{"v":"x","g":"1"}').toString('base64url')}`,
      'projects/p/locations/l/datasets/d/operations/abc',
      `${resource}/operations/a/b`,
    ])
      expect(() => parseOperationName(bad)).toThrowError(/^name: .* is not an operation this API issued/);
  });

  it('reads back the stamp of the latest write at the generation and manager given', () => {
    const stamp = operationStamp({ verb: 'upload', extra: { versionId: '1' } });
    expect(stampedOperation(resource, stamp, 4, 'vertex-api/bob')).toEqual({
      resource,
      verb: 'upload',
      extra: { versionId: '1' },
      generation: 4,
      manager: 'vertex-api/bob',
    });
    expect(stampedOperation(resource, undefined, 4, undefined)).toBeUndefined();
    expect(stampedOperation(resource, 'not/valid', 4, undefined)).toBeUndefined();
  });
});
