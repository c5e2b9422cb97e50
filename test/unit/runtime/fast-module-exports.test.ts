import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fastModuleExports } from '../../../src/runtime/fast-module-exports.js';

const script = fileURLToPath(new URL('../../support/sdk-module-shapes.ts', import.meta.url));

describe('fastModuleExports', () => {
  it('gives every OpenTelemetry module object fast properties once the SDK is registered (V8, natives syntax)', () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
    const { before, after } = JSON.parse(out.split('\n').find((l) => l.startsWith('MODULES '))?.slice(8) ?? '{}') as { before: string[]; after: string[] };
    // The premise: TypeScript's CommonJS re-exports (getters over `void 0` data properties) are dictionary-mode.
    expect(before).toEqual(expect.arrayContaining(['@opentelemetry/core/build/src/index.js', '@opentelemetry/api/build/src/index.js', '@opentelemetry/sdk-trace/build/src/index.js']));
    expect(after).toEqual([]);
  }, 60_000);

  it('leaves what a module exports as it was: the same properties, in the same order, with the same getters', () => {
    const core = createRequire(import.meta.url)('@opentelemetry/core') as object;
    const described = (): [string, PropertyDescriptor][] => Object.entries(Object.getOwnPropertyDescriptors(core));
    const was = described();
    expect(fastModuleExports('/node_modules/@opentelemetry/core/')).toBeGreaterThan(0);
    expect(described()).toEqual(was);
    expect(described().map(([name, d]) => [name, d.get])).toEqual(was.map(([name, d]) => [name, d.get]));
    expect(Object.getPrototypeOf(core)).toBe(Object.prototype);
  });

  it('goes through nothing outside the path it is given', () => {
    expect(fastModuleExports('/no-such-package-path/')).toBe(0);
  });
});
