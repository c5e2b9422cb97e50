import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MACHINE_CATALOGUE,
  fixedCatalogue,
  parseMachineCatalogue,
} from '../../../../../src/api/prediction/v1/machine-catalogue.js';

describe('parseMachineCatalogue', () => {
  it('reads the ConfigMap key machine-types.json', () => {
    const own = { ...DEFAULT_MACHINE_CATALOGUE, machineTypes: { 'x1-small': { cpu: '500m', memory: '1Gi' } } };
    expect(parseMachineCatalogue({ 'machine-types.json': JSON.stringify(own) })).toEqual({ ok: true, catalogue: own });
  });

  it('refuses a catalogue that does not parse, naming the key and the first problem, without throwing', () => {
    expect(parseMachineCatalogue(undefined)).toEqual({ ok: false, problem: 'data[machine-types.json] is missing' });
    expect(parseMachineCatalogue({ other: '{}' })).toEqual({
      ok: false,
      problem: 'data[machine-types.json] is missing',
    });
    expect(parseMachineCatalogue({ 'machine-types.json': '{' })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^data\[machine-types\.json\] is not JSON: /) as unknown,
    });
    const bad = { ...DEFAULT_MACHINE_CATALOGUE, machineTypes: { 'x1-small': { cpu: 'lots', memory: 'many' } } };
    expect(parseMachineCatalogue({ 'machine-types.json': JSON.stringify(bad) })).toEqual({
      ok: false,
      problem:
        'data[machine-types.json]: machineTypes.x1-small.cpu: must be a Kubernetes quantity such as 4, 500m or 15Gi',
    });
  });
});

describe('fixedCatalogue', () => {
  it('is the built-in catalogue by default, and never changes', () => {
    const fixed = fixedCatalogue();
    expect(fixed.current()).toEqual({ catalogue: DEFAULT_MACHINE_CATALOGUE });
    let changes = 0;
    fixed.onChange(() => changes++);
    expect(changes).toBe(0);
  });
});
