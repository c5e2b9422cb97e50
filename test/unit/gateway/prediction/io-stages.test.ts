import { PassThrough } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { CallerWatch } from '../../../../src/gateway/caller.js';
import { GoogleApiError } from '../../../../src/gateway/google-errors.js';
import { writeAnswer, type AnsweredCall } from '../../../../src/gateway/prediction/answer.js';
import { authorise } from '../../../../src/gateway/prediction/authorise.js';
import { callUpstream } from '../../../../src/gateway/prediction/call-upstream.js';
import { readBody } from '../../../../src/gateway/prediction/read-body.js';
import type { ResolvedEndpoint, ResolvedModel } from '../../../../src/gateway/routing-table.js';
import { UpstreamFailure, type UpstreamClient } from '../../../../src/gateway/upstream.js';

function request(headers: Record<string, string>, chunks: string[]): IncomingMessage {
  const stream = new PassThrough();
  for (const c of chunks) stream.write(c);
  stream.end();
  return Object.assign(stream, { headers }) as unknown as IncomingMessage;
}

describe('read-body', () => {
  it('keeps the chunks as they came, and refuses more than the limit, declared or sent', async () => {
    const body = await readBody(request({}, ['ab', 'cd']), 10);
    expect([body.pieces.map(String), body.size]).toEqual([['ab', 'cd'], 4]);
    await expect(readBody(request({ 'content-length': '11' }, []), 10)).rejects.toMatchObject({
      httpCode: 413,
      message: 'Request payload size exceeds the limit: 10 bytes.',
    });
    await expect(readBody(request({}, ['0123456789', 'x']), 10)).rejects.toMatchObject({ httpCode: 413 });
  });
});

describe('authorise', () => {
  it('asks for the method on the object the path names, and answers a path no namespace holds NOT_FOUND', async () => {
    const asked: unknown[] = [];
    const auth = {
      checkNamed: async (...args: unknown[]) => {
        asked.push(args.slice(0, 4));
        return (args[4] as () => GoogleApiError)();
      },
    };
    const refused = await authorise(
      auth as never,
      { method: 'explain', resourceName: 'projects/p/locations/l/endpoints/e', target: undefined },
      'Bearer t',
    ).catch((e: unknown) => e);
    expect(asked).toEqual([['explain', 'Bearer t', undefined, 'projects/p/locations/l/endpoints/e']]);
    expect((refused as GoogleApiError).message).toBe('Endpoint projects/p/locations/l/endpoints/e not found.');
  });
});

const model: ResolvedModel = {
  id: '1',
  namespace: 'ns',
  deployedModelName: 'fraud-1',
  model: 'm',
  modelVersionId: undefined,
  modelDisplayName: 'm',
  backend: undefined,
  unusable: undefined,
};
const endpoint = { namespace: 'ns', name: 'fraud', endpointId: 'fraud' } as ResolvedEndpoint;
const encoded = {
  serving: {
    model,
    targets: [{ origin: 'http://10.0.0.1:8080', basePath: '/base' }],
    protocol: 'KServeV1' as const,
    modelName: 'fraud',
    predictRoute: undefined,
  },
  body: '{}',
  contentType: 'application/json',
  instanceCount: 1,
};

describe('call-upstream', () => {
  it('sends the protocol path, the encoded body and its type, and names the deployed model in a failure', async () => {
    const sent: unknown[] = [];
    const upstream = {
      call: async (
        key: string,
        _targets: unknown,
        req: { path: string; body: unknown; headers: Record<string, string> },
      ) => {
        sent.push([key, req.path, req.body, req.headers]);
        throw new UpstreamFailure('connect', 'refused');
      },
    } as unknown as UpstreamClient;
    const failure = await callUpstream(
      upstream,
      { endpoint, method: 'predict', request: encoded, headers: { traceparent: 't' }, trace: undefined },
      new CallerWatch(),
    ).catch((e: unknown) => e);
    expect(sent).toEqual([
      ['ns/fraud-1', '/v1/models/fraud:predict', '{}', { traceparent: 't', 'content-type': 'application/json' }],
    ]);
    expect(failure).toBeInstanceOf(GoogleApiError);
    expect((failure as GoogleApiError).status).toBe('UNAVAILABLE');
    expect((failure as GoogleApiError).message).toMatch(
      /^Deployed model 1 \(fraud-1\): no model server endpoint accepted a connection/,
    );
  });
});

describe('answer', () => {
  it('writes the request id, and the deployed model and endpoint once known', () => {
    const written: unknown[] = [];
    const res = {
      writeHead: (status: number, headers: unknown) => (written.push(status, headers), res),
      end: (body: unknown) => written.push(String(body)),
    } as unknown as ServerResponse;
    const call: AnsweredCall = {
      requestId: 'r-1',
      method: 'predict',
      endpoint,
      model,
      logged: undefined,
      trace: undefined,
    };
    writeAnswer(res, { status: 200, contentType: 'application/json; charset=UTF-8', body: '{"predictions":[]}' }, call);
    expect(written).toEqual([
      200,
      {
        'content-type': 'application/json; charset=UTF-8',
        'content-length': 18,
        'x-request-id': 'r-1',
        'x-vertex-ai-deployed-model-id': '1',
        'x-vertex-ai-endpoint-id': 'fraud',
      },
      '{"predictions":[]}',
    ]);
  });
});
