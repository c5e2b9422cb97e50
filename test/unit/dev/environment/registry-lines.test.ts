import { describe, expect, it } from 'vitest';
import { registryLookupLines } from '../../../../dev/environment/registry-lines.js';
import { compileFilter } from '../../../../src/gateway/registry/filter.js';
import { loadExamples } from '../../../support/examples.js';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';

describe('the registry lines npm start prints', () => {
  const objects = loadExamples('valid')
    .filter((f) => f.path.includes('/registry/'))
    .flatMap((f) => f.documents.map((d) => d.object as KubeObject));

  it('prints a resolve curl with a filter that parses and selects an example endpoint, and the DNS name', () => {
    const lines = registryLookupLines('http://127.0.0.1:8090', objects, 'endpoint-demo');
    const text = lines.join('\n');
    expect(text).toContain(
      "curl -s -X POST 'http://127.0.0.1:8090/v1/projects/shop-platform/locations/europe-west1/namespaces/payments/services/checkout:resolve'",
    );
    const body = /-d '(.*)'/.exec(text)?.[1];
    const { endpointFilter } = JSON.parse(body ?? '{}') as { endpointFilter: string };
    expect(endpointFilter).toMatch(/^annotations\.example\.com\/zone=europe-west1-[a-d]$/);
    expect(() => compileFilter(endpointFilter)).not.toThrow();
    expect(text).toContain('checkout.endpoint-demo.svc');
  });

  it('prints nothing without a RegistryService', () => {
    expect(registryLookupLines('http://x', [], 'ns')).toEqual([]);
  });
});
