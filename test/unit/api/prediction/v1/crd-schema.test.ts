import { describe, expect, it } from 'vitest';
import { crdFor } from '../../../../../src/api/crd/generate.js';
import type { JSONSchemaProps } from '../../../../../src/api/crd/openapi.js';
import { allKinds } from '../../../../../src/api/kinds.js';
import { deployedModelKind, predictionEndpointKind } from '../../../../../src/api/prediction/v1/kinds.js';

function schemaOf(kind: typeof predictionEndpointKind): JSONSchemaProps {
  const [version] = crdFor(kind).spec.versions as { schema: { openAPIV3Schema: JSONSchemaProps } }[];
  if (!version) throw new Error('no version');
  return version.schema.openAPIV3Schema;
}

function patterns(node: JSONSchemaProps): string[] {
  const own = typeof node.pattern === 'string' ? [node.pattern] : [];
  const children = [
    ...Object.values(node.properties ?? {}),
    ...(node.items ? [node.items] : []),
    ...(typeof node.additionalProperties === 'object' ? [node.additionalProperties] : []),
  ];
  return [...own, ...children.flatMap(patterns)];
}

/** Every property under `node` (recursively, through list items) with its description. */
function descriptions(node: JSONSchemaProps): [string, string | undefined][] {
  return Object.entries(node.properties ?? {}).flatMap(([name, schema]) => [
    [name, schema.description] as [string, string | undefined],
    ...descriptions(schema),
    ...(schema.items ? descriptions(schema.items) : []),
  ]);
}

describe('prediction CRDs', () => {
  it('are registered in allKinds', () => {
    expect(allKinds).toContain(predictionEndpointKind);
    expect(allKinds).toContain(deployedModelKind);
  });

  it.each([predictionEndpointKind, deployedModelKind].map((k) => [k.kind, k] as const))(
    '%s uses only RE2-compatible patterns',
    (_kind, kind) => {
      const found = patterns(schemaOf(kind));
      expect(found.length).toBeGreaterThan(3);
      for (const p of found) {
        // RE2 has no lookaround and no backreferences.
        expect(p, p).not.toMatch(/\(\?[=!<]|\\[1-9]/);
        expect(() => new RegExp(p, 'u'), p).not.toThrow();
      }
    },
  );

  it.each([predictionEndpointKind, deployedModelKind].map((k) => [k.kind, k] as const))(
    '%s documents every spec field, starting with its name and saying optional or required',
    (_kind, kind) => {
      const spec = schemaOf(kind).properties?.spec;
      expect(spec).toBeDefined();
      for (const [name, description] of descriptions(spec!)) {
        expect(description, name).toBeDefined();
        expect(description!.startsWith(name), `${name}: ${description}`).toBe(true);
        expect(description, name).toMatch(/\b(optional|required)\b/);
      }
    },
  );

  it('counts displayName and labels in characters (maxLength), not with a UTF-16 zod check', () => {
    const spec = schemaOf(predictionEndpointKind).properties!.spec!;
    expect(spec.properties!.displayName!.maxLength).toBe(128);
    expect(spec.properties!.labels!.maxProperties).toBe(64);
    expect((spec.properties!.labels!.additionalProperties as JSONSchemaProps).maxLength).toBe(64);
    expect(spec.required).toEqual(['displayName']);
  });

  it('makes DeployedModel spec.id and spec.endpointRef.name immutable with CEL', () => {
    const spec = schemaOf(deployedModelKind).properties!.spec!;
    for (const field of [spec.properties!.id!, spec.properties!.endpointRef!.properties!.name!]) {
      expect(field['x-kubernetes-validations']).toEqual([
        expect.objectContaining({
          rule: 'self == oldSelf',
          message: expect.stringMatching(/^field is immutable: /),
          messageExpression: expect.stringContaining('oldSelf'),
        }),
      ]);
    }
  });

  it('types the backend port as Kubernetes IntOrString, its bounds in a CEL rule', () => {
    const backend = schemaOf(deployedModelKind).properties!.spec!.properties!.backend!;
    const port = backend.properties!.service!.properties!.port!;
    expect(port['x-kubernetes-int-or-string']).toBe(true);
    expect(port.type).toBeUndefined();
    expect(port.anyOf).toBeUndefined();
    expect(backend.required).toEqual(['protocol', 'modelName']);
  });

  it('has the printer columns users look at', () => {
    const columns = (kind: typeof predictionEndpointKind): string[] =>
      kind.versions[0]!.printerColumns.map((c) => `${c.name}=${c.jsonPath}`);
    expect(columns(predictionEndpointKind)).toEqual(
      expect.arrayContaining([
        'Display Name=.spec.displayName',
        'Models=.status.deployedModelCount',
        'Ready=.status.conditions[?(@.type=="Ready")].status',
        'Reason=.status.conditions[?(@.type=="Ready")].reason',
        'Age=.metadata.creationTimestamp',
      ]),
    );
    expect(columns(deployedModelKind)).toEqual(
      expect.arrayContaining([
        'Endpoint=.spec.endpointRef.name',
        'Model=.spec.model',
        'ID=.status.id',
        'Ready=.status.conditions[?(@.type=="Ready")].status',
      ]),
    );
  });
});
