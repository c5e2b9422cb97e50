import { describe, expect, it } from 'vitest';
import yaml from 'js-yaml';
import { MAX_MANIFEST_DEPTH, valueDepth, yamlDepthProblem } from '../../../src/manifests/depth.js';
import { ManifestReadError, parseManifests } from '../../../src/manifests/load.js';

function blockNested(depth: number): string {
  return Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
}

describe('manifest nesting limit', () => {
  it('accepts real manifests and nesting up to the limit', () => {
    const manifest =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b}\ndata:\n  script: |\n    {{{{[[[[ not yaml\n        deeply indented text\n  list:\n  - - - a\n';
    expect(yamlDepthProblem(manifest)).toBeUndefined();
    expect(parseManifests('ok.yaml', blockNested(MAX_MANIFEST_DEPTH - 1))).toHaveLength(1);
    expect(parseManifests('flow.json', `{"a":${'['.repeat(90)}${']'.repeat(90)}}`)).toHaveLength(1);
  });

  it('refuses deep block, flow and compact-sequence nesting before js-yaml recurses, naming the line', () => {
    for (const text of [
      blockNested(5_000),
      `a: ${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      `${'- '.repeat(3_000)}x`,
      `{"a":${'{"b":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
    ]) {
      expect(() => parseManifests('deep.yaml', text)).toThrow(ManifestReadError);
      expect(() => parseManifests('deep.yaml', text)).toThrow(/nested more than 100 levels deep at line \d+/);
    }
  });

  it('measures what aliases build, each shared node once (an alias chain; a billion-laughs document stays fast)', () => {
    const chain = ['a0: &a0 [x]', ...Array.from({ length: 300 }, (_, i) => `a${i + 1}: &a${i + 1} [*a${i}]`)].join(
      '\n',
    );
    expect(() => parseManifests('chain.yaml', chain)).toThrow(
      /nested more than 100 levels deep \(through YAML aliases\)/,
    );
    const laughs = [
      'l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
      ...Array.from(
        { length: 30 },
        (_, i) => `l${i + 1}: &l${i + 1} [*l${i}, *l${i}, *l${i}, *l${i}, *l${i}, *l${i}, *l${i}, *l${i}, *l${i}]`,
      ),
    ].join('\n');
    const started = performance.now();
    expect(valueDepth(yaml.load(laughs))).toBe(32);
    expect(performance.now() - started).toBeLessThan(1_000);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(valueDepth(cyclic)).toBe(Infinity);
  });
});
