import { describe, expect, it } from 'vitest';
import { allKinds } from '../../../../src/api/kinds.js';
import { crdFor } from '../../../../src/api/crd/generate.js';
import { celPattern, celString } from '../../../../src/api/crd/cel.js';
import { celRules, type JSONSchemaProps } from '../../../../src/api/crd/openapi.js';

// What the CRDs' CEL rules are made of. The apiserver compiles, prices and enforces them
// (test/integration/webhook/apiserver-alone.test.ts); here, the parts that need no apiserver.

const located = allKinds.flatMap((def) =>
  (crdFor(def).spec.versions as { name: string; schema: { openAPIV3Schema: JSONSchemaProps } }[]).flatMap((v) =>
    celRules(v.schema.openAPIV3Schema).map((r) => ({ kind: def.kind, version: v.name, ...r })),
  ),
);

describe('CEL rules in the CRDs', () => {
  it('exist for the immutable fields and the single-object rules', () => {
    const paths = located.map((l) => `${l.kind}/${l.version}:${l.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        'DeployedModel/v1:spec.id',
        'DeployedModel/v1:spec',
        'DeployedModel/v1:spec.backend',
        'DeployedModel/v1:spec.backend.service.port',
        'PredictionEndpoint/v1:spec',
        'PredictionEndpoint/v1:spec.trafficSplit',
        'PredictionEndpoint/v1:spec.labels',
        'RegistryService/v1:spec.name',
        'RegistryService/v1:spec.annotations',
        'RegistryEndpoint/v1:spec.address',
        'RegistryEndpoint/v1beta1:spec.metadata',
        'RegistryEndpoint/v1beta1:spec.network',
        'ShopUser/v1:spec.email',
      ]),
    );
  });

  it.each(located.map((l) => [`${l.kind}/${l.version} ${l.path}: ${l.rule}`, l] as const))(
    '%s carries a message that says the rule',
    (_name, l) => {
      expect(l.message ?? '').toMatch(/\w{3,}.*\w{3,}/);
    },
  );
});

describe('CEL literals', () => {
  it('escape quotes and backslashes, so a pattern reaches RE2 as written', () => {
    expect(celString("it's")).toBe("'it\\'s'");
    expect(celPattern(/^a\.b\/c$/)).toBe("'^a\\\\.b\\\\/c$'");
  });
});
