import { describe, expect, it } from 'vitest';
import {
  deployedModelIdProblem,
  deployedModelObjectName,
  endpointIdProblem,
  generateDeployedModelId,
  generateEndpointId,
} from '../../../../../src/gateway/writes/endpoints/ids.js';

/** A deterministic source: cycles through `values` (each taken modulo max). */
function cycling(values: number[]) {
  let i = 0;
  return (max: number) => (values[i++ % values.length] ?? 0) % max;
}

describe('endpoint_id', () => {
  it.each(['iris', 'a', 'team-a-endpoint-1', 'a'.repeat(63), '1', '123456789'])('accepts %s', (id) => {
    expect(endpointIdProblem(id)).toBeUndefined();
  });

  it.each([
    ['0123', 'no leading zero'],
    ['1234567890', '1 to 9 digits'],
    ['a'.repeat(64), 'at most 63'],
    ['Iris', 'lowercase'],
    ['iris-', 'ending with a letter or digit'],
    ['-iris', 'lowercase letters'],
    ['ir_is', 'hyphens'],
    ['', 'lowercase letters'],
  ])('refuses %j', (id, why) => {
    expect(endpointIdProblem(id)).toContain(why);
  });

  it('generates 19 digits without a leading zero, which no user-given id can be', () => {
    const id = generateEndpointId(cycling([0, 3, 7]));
    expect(id).toMatch(/^[1-9][0-9]{18}$/);
    expect(endpointIdProblem(id)).toContain('1 to 9 digits');
  });
});

describe('deployed model ids', () => {
  it('accepts 1 to 10 digits only', () => {
    expect(deployedModelIdProblem('1')).toBeUndefined();
    expect(deployedModelIdProblem('1234567890')).toBeUndefined();
    expect(deployedModelIdProblem('12345678901')).toBe('a deployed model id must be 1 to 10 digits');
    expect(deployedModelIdProblem('12a')).toBe('a deployed model id must be 1 to 10 digits');
  });

  it('generates a 10-digit id the endpoint does not use yet', () => {
    const random = cycling([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    const id = generateDeployedModelId(new Set(['1123456789']), random);
    expect(id).toMatch(/^[1-9][0-9]{9}$/);
    expect(id).not.toBe('1123456789');
    expect(id).toBe('2000000000');
  });

  it('names the DeployedModel object after its endpoint and id', () => {
    expect(deployedModelObjectName('iris', '42')).toBe('iris-42');
  });
});
