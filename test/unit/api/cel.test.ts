import { parse } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { allKinds } from '../../../src/api/kinds.js';
import { crdFor } from '../../../src/api/crd/generate.js';
import { celRules, type JSONSchemaProps } from '../../../src/api/crd/openapi.js';

// Every x-kubernetes-validations rule is compiled and evaluated here, without a cluster, with a CEL
// implementation (the integration tests have the apiserver enforce them).
interface Located {
  kind: string;
  version: string;
  path: string;
  rule: string;
  message?: string;
  node: JSONSchemaProps;
}

function nodeAt(schema: JSONSchemaProps, path: string): JSONSchemaProps {
  let node = schema;
  for (const part of path.split('.').filter(Boolean)) {
    const next = node.properties?.[part];
    if (!next) throw new Error(`no schema node at ${path}`);
    node = next;
  }
  return node;
}

const located: Located[] = allKinds.flatMap((def) =>
  (crdFor(def).spec.versions as { name: string; schema: { openAPIV3Schema: JSONSchemaProps } }[]).flatMap((v) =>
    celRules(v.schema.openAPIV3Schema).map((r) => ({ kind: def.kind, version: v.name, ...r, node: nodeAt(v.schema.openAPIV3Schema, r.path) })),
  ),
);

/** Two different sample values that fit a schema node (for transition rules). */
function samples(node: JSONSchemaProps): [unknown, unknown] {
  switch (node.type) {
    case 'string':
      return ['projects/123/locations/global/networks/a', 'projects/456/locations/global/networks/b'];
    case 'integer':
    case 'number':
      return [1, 2];
    case 'boolean':
      return [true, false];
    case 'object':
      return [{ a: 'x' }, { a: 'y' }];
    case 'array':
      return [['x'], ['y']];
    default:
      throw new Error(`no samples for type ${String(node.type)}`);
  }
}

describe('CEL rules in the CRDs', () => {
  it('exist for the immutable fields', () => {
    const paths = located.map((l) => `${l.kind}/${l.version}:${l.path}`);
    expect(paths).toEqual(
      expect.arrayContaining(['DeployedModel/v1:spec.id', 'RegistryService/v1:spec.name', 'RegistryEndpoint/v1:spec.name', 'RegistryEndpoint/v1beta1:spec.name', 'RegistryEndpoint/v1beta1:spec.network']),
    );
  });

  it.each(located.map((l) => [`${l.kind}/${l.version} ${l.path}: ${l.rule}`, l] as const))('%s compiles, carries a message and holds', (_name, l) => {
    expect(l.message, 'a message that names the field').toMatch(/\S/);
    const program = parse(l.rule);
    const [a, b] = samples(l.node);
    if (l.rule.includes('oldSelf')) {
      // A transition rule: an unchanged value must pass.
      expect(program({ self: a, oldSelf: a })).toBe(true);
      // A rule on an object guards one of its fields (its fieldPath): the test below covers it.
      if (/immutable/i.test(l.message ?? '') && l.node.type !== 'object') expect(program({ self: b, oldSelf: a })).toBe(false);
    } else {
      expect(typeof program({ self: a })).toBe('boolean');
    }
  });

  it('treats an absent v1beta1 spec.network and "" as the same (unset) value, and refuses adding or removing one', () => {
    const rule = located.find((l) => l.kind === 'RegistryEndpoint' && l.version === 'v1beta1' && l.path === 'spec' && l.rule.includes('network'));
    expect(rule).toBeDefined();
    const program = parse(rule?.rule ?? 'false');
    const network = 'projects/123/locations/global/networks/a';
    expect(program({ self: { network: '' }, oldSelf: {} })).toBe(true);
    expect(program({ self: {}, oldSelf: { network: '' } })).toBe(true);
    expect(program({ self: { network }, oldSelf: { network } })).toBe(true);
    expect(program({ self: { network }, oldSelf: {} })).toBe(false);
    expect(program({ self: {}, oldSelf: { network } })).toBe(false);
    expect(program({ self: { network: '' }, oldSelf: { network } })).toBe(false);
  });
});
