import { describe, expect, it } from 'vitest';
import { Code } from '@connectrpc/connect';
import { GoogleApiError, GOOGLE_HTTP_CODES, type GoogleStatus } from '../../../../src/gateway/google-errors.js';
import { errorOfAnswer, grpcCode, toConnectError } from '../../../../src/gateway/grpc/status.js';
import { nameParts } from '../../../../src/gateway/grpc/read-services.js';
import { restPathOf } from '../../../../src/gateway/grpc/prediction-service.js';

describe('Google errors as gRPC statuses', () => {
  it('maps every status name to the gRPC code of that name', () => {
    const expected: Record<string, number> = {
      INVALID_ARGUMENT: 3,
      FAILED_PRECONDITION: 9,
      OUT_OF_RANGE: 11,
      UNAUTHENTICATED: 16,
      PERMISSION_DENIED: 7,
      NOT_FOUND: 5,
      ABORTED: 10,
      ALREADY_EXISTS: 6,
      RESOURCE_EXHAUSTED: 8,
      CANCELLED: 1,
      UNKNOWN: 2,
      INTERNAL: 13,
      DATA_LOSS: 15,
      UNIMPLEMENTED: 12,
      UNAVAILABLE: 14,
      DEADLINE_EXCEEDED: 4,
    };
    for (const status of Object.keys(GOOGLE_HTTP_CODES) as GoogleStatus[])
      expect(grpcCode(status)).toBe(expected[status]);
  });

  it('keeps the message and attaches an ErrorInfo naming the reason', () => {
    const err = toConnectError(new GoogleApiError('PERMISSION_DENIED', 'no'));
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toBe('no');
    expect(err.details).toHaveLength(1);
  });

  it("reads a REST answer's Google error, or quotes a model server's own answer", () => {
    expect(errorOfAnswer(404, '{"error":{"code":404,"message":"gone","status":"NOT_FOUND"}}')).toMatchObject({
      status: 'NOT_FOUND',
      message: 'gone',
    });
    expect(errorOfAnswer(503, 'busy')).toMatchObject({
      status: 'UNAVAILABLE',
      message: 'the model server answered 503: busy',
    });
    expect(errorOfAnswer(500, 'x'.repeat(2000)).message.length).toBeLessThan(1100);
  });
});

describe('resource names as REST paths', () => {
  it('encodes each segment, so a name cannot add a method or a query', () => {
    expect(restPathOf('projects/p/locations/l/endpoints/e', 'predict')).toBe(
      '/v1/projects/p/locations/l/endpoints/e:predict',
    );
    expect(restPathOf('projects/p/locations/l/endpoints/e:explain', 'predict')).toBe(
      '/v1/projects/p/locations/l/endpoints/e%3Aexplain:predict',
    );
    expect(() => restPathOf('projects/p/endpoints/e', 'predict')).toThrow(/endpoint: invalid value/);
    expect(
      nameParts(
        'name',
        'projects/p/locations/l/namespaces/n/services/s',
        'projects/*/locations/*/namespaces/*/services/*',
      ),
    ).toEqual(['projects', 'p', 'locations', 'l', 'namespaces', 'n', 'services', 's']);
    expect(() => nameParts('name', 'projects/p/locations/l', 'projects/*/locations/*/endpoints/*')).toThrow(
      /must be projects\/\{id\}\/locations\/\{id\}\/endpoints\/\{id\}/,
    );
    expect(() => nameParts('name', 'projects//locations/l', 'projects/*/locations/*')).toThrow(/name: invalid value/);
  });
});
