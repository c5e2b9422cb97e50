import { describe, expect, it } from 'vitest';
import {
  callableEndpoint,
  CURL_AUTH_HEADER,
  CURL_GATEWAY_OPTIONS,
  curlLines,
} from '../../../../dev/environment/demo-calls.js';
import { demoCallerLines } from '../../../../dev/environment/demo-caller.js';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';

function ep(
  name: string,
  split: Record<string, number>,
  models: { id: string; ready: string }[],
  url?: string,
): KubeObject {
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name },
    spec: { trafficSplit: split },
    status: { ...(url ? { url } : {}), deployedModels: models },
  };
}

describe('the endpoint dev calls', () => {
  it('is the first with a split over Ready deployed models and a URL', () => {
    const url = 'http://127.0.0.1:8090/v1/projects/endpoint-demo/locations/us-central1/endpoints/fraud-scoring';
    const ready = [
      { id: '1', ready: 'True' },
      { id: '2', ready: 'True' },
    ];
    expect(
      callableEndpoint([
        ep('empty', {}, [], 'http://x'),
        ep('no-url', { '1': 70, '2': 30 }, ready),
        ep(
          'one-down',
          { '1': 70, '2': 30 },
          [
            { id: '1', ready: 'True' },
            { id: '2', ready: 'False' },
          ],
          'http://y',
        ),
        ep('fraud-scoring', { '1': 70, '2': 30 }, ready, url),
      ]),
    ).toEqual({ name: 'fraud-scoring', url, split: { '1': 70, '2': 30 } });
    expect(callableEndpoint([ep('empty', {}, [], 'http://x')])).toBeUndefined();
  });

  it('prints a curl of :predict and a counted loop', () => {
    const lines = curlLines('http://127.0.0.1:8090/v1/projects/p/locations/l/endpoints/e');
    expect(lines[0]).toContain(
      'curl -s -X POST http://127.0.0.1:8090/v1/projects/p/locations/l/endpoints/e:predict -H \'content-type: application/json\' -d \'{"instances":[{"amount":1250',
    );
    expect(lines.find((l) => l.includes('uniq -c'))).toContain(
      '| grep -o \'"deployedModelId":"[0-9]*"\' | sort | uniq -c',
    );
  });
});

describe('the calls dev prints with the gateway authenticating', () => {
  it('sends the bearer token in the :predict and :explain curls', () => {
    const lines = curlLines('http://127.0.0.1:8090/v1/projects/p/locations/l/endpoints/e', true);
    expect(lines[0]).toContain(`:predict -H 'content-type: application/json' ${CURL_GATEWAY_OPTIONS} -d`);
    expect(lines[1]).toContain(`:explain -H 'content-type: application/json' ${CURL_GATEWAY_OPTIONS} -d`);
    expect(CURL_AUTH_HEADER).toBe('-H "Authorization: Bearer $TOKEN"');
    expect(CURL_GATEWAY_OPTIONS).toBe('--cacert "$GATEWAY_CA" -H "Authorization: Bearer $TOKEN"');
  });

  it("prints the Python SDK's documented path against the gateway, its here-document at the margin", () => {
    const lines = curlLines('https://localhost:8090/v1/projects/p/locations/l/endpoints/e', true);
    const start = lines.findIndex((l) => l.includes("python3 - <<'EOF'"));
    expect(lines[start]).toBe(
      `  GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="$GATEWAY_CA" REQUESTS_CA_BUNDLE="$GATEWAY_CA" python3 - <<'EOF'`,
    );
    expect(lines.slice(start + 1)).toContain(
      'aiplatform.init(api_endpoint="localhost:8090", credentials=Credentials(token=os.environ["TOKEN"]))',
    );
    expect(lines.slice(start + 1)).toContain('endpoint = aiplatform.Endpoint("projects/p/locations/l/endpoints/e")');
    expect(lines.at(-1)).toBe('EOF');
  });

  it('prints the token export and the commands that mint a new one for the gateway audience', () => {
    const lines = demoCallerLines('endpoint-demo', 'tok');
    expect(lines).toContain('  export TOKEN=tok');
    expect(lines).toContain('  kubectl create token demo-caller -n endpoint-demo --audience endpoint-operator-gateway');
    expect(lines.join('\n')).toContain(
      'kubectl create --raw /api/v1/namespaces/endpoint-demo/serviceaccounts/demo-caller/token',
    );
  });
});
