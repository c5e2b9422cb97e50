import { describe, expect, it } from 'vitest';
import { crdFor } from '../../../../src/api/crd/generate.js';
import type { JSONSchemaProps } from '../../../../src/api/crd/openapi.js';
import { findKind } from '../../../../src/api/kinds.js';
import { registryEndpointKind, registryServiceKind } from '../../../../src/api/registry/index.js';

interface Version {
  name: string;
  schema: { openAPIV3Schema: JSONSchemaProps };
  additionalPrinterColumns: { name: string; jsonPath: string }[];
}

const versions = (kind: typeof registryEndpointKind): Version[] => crdFor(kind).spec.versions as Version[];
const specOf = (v: Version): JSONSchemaProps => v.schema.openAPIV3Schema.properties!.spec!;

function patterns(node: JSONSchemaProps): string[] {
  const own = typeof node.pattern === 'string' ? [node.pattern] : [];
  const children = [
    ...Object.values(node.properties ?? {}),
    ...(node.items ? [node.items] : []),
    ...(typeof node.additionalProperties === 'object' ? [node.additionalProperties] : []),
  ];
  return [...own, ...children.flatMap(patterns)];
}

describe('registry CRDs', () => {
  it('are found by apiVersion and kind, in both RegistryEndpoint versions', () => {
    expect(findKind('registry.endpoint-operator.dev/v1', 'RegistryService')?.def).toBe(registryServiceKind);
    expect(findKind('registry.endpoint-operator.dev/v1', 'RegistryEndpoint')?.version.storage).toBe(true);
    expect(findKind('registry.endpoint-operator.dev/v1beta1', 'RegistryEndpoint')?.version.storage).toBe(false);
    expect(findKind('registry.endpoint-operator.dev/v1beta1', 'RegistryService')).toBeUndefined();
  });

  it('use only patterns Go RE2 accepts (no lookaround, no backreferences)', () => {
    const all = [registryServiceKind, registryEndpointKind].flatMap((k) =>
      versions(k).flatMap((v) => patterns(v.schema.openAPIV3Schema)),
    );
    expect(all.length).toBeGreaterThanOrEqual(5);
    for (const p of all) {
      expect(p, p).not.toMatch(/\(\?[=!<]|\\[1-9]/);
      expect(() => new RegExp(p)).not.toThrow();
    }
  });

  it('show Ready, Reason, Address, Port and the Service Directory name', () => {
    for (const v of versions(registryEndpointKind)) {
      expect(v.additionalPrinterColumns.map((c) => c.name)).toEqual(
        expect.arrayContaining(['Ready', 'Reason', 'Address', 'Port', 'Name', 'Age']),
      );
    }
    expect(versions(registryServiceKind)[0]!.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Ready',
      'Reason',
      'Service',
      'Age',
    ]);
  });

  it('let the apiserver refuse the grossest address mistakes by pattern and length', () => {
    for (const v of versions(registryEndpointKind)) {
      const address = specOf(v).properties!.address!;
      const re = new RegExp(address.pattern as string);
      expect(address.maxLength).toBe(45);
      for (const bad of ['[::1]', '[::1]:8080', 'fe80::1%eth0', 'test:bad:address', 'host.example'])
        expect(re.test(bad), bad).toBe(false);
      for (const good of ['10.0.0.5', '2001:db8::5', '']) expect(re.test(good), good).toBe(true);
    }
  });

  it('key conditions by type so server-side apply merges them one by one', () => {
    const status = versions(registryEndpointKind)[0]!.schema.openAPIV3Schema.properties!.status!;
    expect(status.properties!.conditions).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
  });
});
