import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../../src/api/common/kube-object.js';
import { anyJson, operationJson } from '../../../../../src/gateway/writes/operations/operation-message.js';
import { deletedState, OperationVerbs, reconciledState } from '../../../../../src/gateway/writes/operations/verbs.js';

function obj(observedGeneration: number, conditions: unknown[]): KubeObject {
  return {
    metadata: {
      name: 'iris',
      uid: 'u1',
      generation: 2,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'vertex-api/alice', operation: 'Apply', time: '2026-01-02T00:00:00Z' }],
    },
    status: { observedGeneration, conditions },
  };
}
const ready = { type: 'Ready', status: 'True', reason: 'Reconciled', message: '' };

describe('derived operation state', () => {
  it('is done when the status describes the generation and says Ready, failed when Stalled', () => {
    expect(reconciledState(obj(1, [ready]), 2, 'Model "iris"')).toMatchObject({ done: false });
    expect(reconciledState(obj(2, [ready]), 2, 'Model "iris"')).toBe('ready');
    const stalled = reconciledState(
      obj(2, [
        { type: 'Ready', status: 'False', reason: 'ImagePullBackOff', message: 'x' },
        { type: 'Stalled', status: 'True', reason: 'ImagePullBackOff', message: 'image "nope:1" cannot be pulled' },
      ]),
      2,
      'DeployedModel "d"',
    );
    expect(stalled).toMatchObject({ done: true });
    const error = (stalled as { error: { status: string; message: string } }).error;
    expect(error.status).toBe('FAILED_PRECONDITION');
    expect(error.message).toContain('ImagePullBackOff: image "nope:1" cannot be pulled');
    expect(reconciledState(undefined, 2, 'Model "iris"')).toMatchObject({ done: true });
  });

  it('ends a delete when no object with the uid is left', () => {
    expect(deletedState(undefined, 'u1')).toEqual({ done: true, response: {} });
    expect(deletedState(obj(2, []), 'other')).toEqual({ done: true, response: {} });
    expect(deletedState(obj(2, []), 'u1')).toMatchObject({ done: false });
  });

  it('writes typed Any metadata and response; a verb registers once', () => {
    const verb = {
      verb: 'upload',
      metadataType: 'google.cloud.aiplatform.v1.UploadModelOperationMetadata',
      responseType: 'google.cloud.aiplatform.v1.UploadModelResponse',
      derive: async () => ({ done: false as const }),
    };
    const verbs = new OperationVerbs([verb]);
    expect(() => verbs.add(verb)).toThrow(/twice/);
    const op = operationJson(
      'n',
      { resource: 'r', verb: 'upload', manager: 'vertex-api/alice' },
      verb,
      { done: true, response: { model: 'm', modelVersionId: '1' }, object: obj(2, [ready]) },
      new Date('2026-01-03T00:00:00Z'),
    );
    expect(op).toEqual({
      name: 'n',
      metadata: {
        '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.UploadModelOperationMetadata',
        genericMetadata: { createTime: '2026-01-02T00:00:00Z', updateTime: '2026-01-03T00:00:00.000Z' },
      },
      done: true,
      response: {
        '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse',
        model: 'm',
        modelVersionId: '1',
      },
    });
    expect(anyJson('google.protobuf.Empty', {})).toEqual({
      '@type': 'type.googleapis.com/google.protobuf.Empty',
      value: {},
    });
  });
});
