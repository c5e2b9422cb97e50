import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { toolsDir } from '../../../../dev/cluster/go-build.js';
import { OTELCOL } from '../../../support/otel-collector.js';

/** The collector publishes its stable (1.x) modules with each 0.x release: v1.71.0 is v0.165.0's. */
const STABLE = 'v1.71.0';

const read = (file: string): string => readFileSync(join(toolsDir(), OTELCOL.module, file), 'utf8');

interface BuilderConfig {
  dist: { module: string; version: string };
  [kind: string]: unknown;
}

/** Every `gomod` line of the builder's manifest: [module path, version]. */
function components(config: BuilderConfig): [string, string][] {
  const kinds = ['receivers', 'processors', 'exporters', 'extensions', 'connectors', 'providers', 'converters'];
  return kinds.flatMap((kind) =>
    ((config[kind] ?? []) as { gomod: string }[]).map((c) => c.gomod.split(' ') as [string, string]),
  );
}

describe('tools/otelcol, the collector the builder generated from builder-config.yaml', () => {
  const config = yaml.load(read('builder-config.yaml')) as BuilderConfig;
  const goMod = read('go.mod');
  const generated = read('components.go') + read('main.go');

  it('requires and registers every component of the manifest, and no other', () => {
    const listed = components(config);
    expect(listed.map(([path]) => path).sort()).toEqual(
      expect.arrayContaining([
        'go.opentelemetry.io/collector/receiver/otlpreceiver',
        'github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter',
      ]),
    );
    for (const [path, version] of listed) {
      expect(goMod).toContain(`\t${path} ${version}\n`);
      // The builder records each component's module next to its factory (`otelcol components` prints it).
      expect(generated).toContain(`"${path} ${version}"`);
    }
    const registered = [...generated.matchAll(/"(\S+) (v\d\S*)"/g)].map((m) => `${m[1]} ${m[2]}`).sort();
    expect(registered).toEqual(listed.map((c) => c.join(' ')).sort());
  });

  it('is at one collector release throughout, the one the tests build', () => {
    expect(`v${config.dist.version}`).toBe(OTELCOL.version);
    expect(goMod).toMatch(new RegExp(`^module ${config.dist.module}$`, 'm'));
    expect(goMod).toMatch(new RegExp(`^tool ${config.dist.module}$`, 'm'));
    const core = [...goMod.matchAll(/^\t(go\.opentelemetry\.io\/collector\S*) (\S+)/gm)];
    const contrib = [
      ...goMod.matchAll(/^\t(github\.com\/open-telemetry\/opentelemetry-collector-contrib\/\S+) (\S+)/gm),
    ];
    expect(core.length).toBeGreaterThan(20);
    expect(new Set(core.map((m) => m[2]))).toEqual(new Set([OTELCOL.version, STABLE]));
    expect(new Set(contrib.map((m) => m[2]))).toEqual(new Set([OTELCOL.version]));
  });
});
