import { describe, expect, it } from 'vitest';
import { deploySplit, undeploySplit } from '../../../../../src/gateway/writes/endpoints/split.js';

describe('DeployModel traffic_split', () => {
  it('leaves the split alone when the request gives none', () => {
    expect(deploySplit({}, '7', new Set(['1']))).toEqual({ split: undefined, violations: [] });
  });

  it('puts the new id in place of "0"', () => {
    expect(deploySplit({ '0': 100 }, '7', new Set())).toEqual({ split: { '7': 100 }, violations: [] });
    expect(deploySplit({ '0': 50, '12': 50 }, '7', new Set(['12']))).toEqual({
      split: { '7': 50, '12': 50 },
      violations: [],
    });
  });

  it("accepts the new model's own id in place of the placeholder", () => {
    expect(deploySplit({ '7': 30, '1': 70 }, '7', new Set(['1'])).split).toEqual({ '1': 70, '7': 30 });
  });

  it('refuses a split that does not add up to 100, naming the sum', () => {
    expect(deploySplit({ '0': 60, '1': 30 }, '7', new Set(['1'])).violations).toEqual([
      { field: 'traffic_split', description: 'the percentages must add up to 100; they add up to 90' },
    ]);
  });

  it('refuses an id that is not deployed on the endpoint, naming the ones that are', () => {
    expect(deploySplit({ '0': 50, '9': 50 }, '7', new Set(['1', '2'])).violations).toEqual([
      {
        field: 'traffic_split["9"]',
        description:
          '9 is not a model deployed on this endpoint (deployed: 1, 2); use "0" for the model being deployed',
      },
    ]);
  });

  it('refuses a percentage out of range and a key that is no id', () => {
    const { violations } = deploySplit({ '0': 101, abc: 0 }, '7', new Set());
    expect(violations.map((v) => v.field)).toEqual(['traffic_split["0"]', 'traffic_split["abc"]']);
    expect(violations[0]?.description).toBe('101: must be an integer percentage from 0 to 100');
  });

  it('refuses the new model named twice', () => {
    const { violations } = deploySplit({ '0': 50, '7': 50 }, '7', new Set());
    expect(violations).toEqual([
      {
        field: 'traffic_split["7"]',
        description: 'the model being deployed is named twice, as "0" and as its id 7: use one',
      },
    ]);
  });
});

describe('UndeployModel traffic_split', () => {
  it('empties the split when the last model goes', () => {
    expect(undeploySplit({ '1': 100 }, {}, '1', new Set())).toEqual({
      split: {},
      violations: [],
      stillServing: undefined,
    });
  });

  it('takes the requested split, dropping the undeployed model given 0', () => {
    expect(undeploySplit({ '1': 50, '2': 50 }, { '1': 0, '2': 100 }, '1', new Set(['2']))).toEqual({
      split: { '2': 100 },
      violations: [],
      stillServing: undefined,
    });
  });

  it('refuses traffic for the model being undeployed, or for one that is not staying', () => {
    const { violations } = undeploySplit({}, { '1': 50, '3': 50 }, '1', new Set(['2']));
    expect(violations.map((v) => v.field)).toEqual(['traffic_split["1"]', 'traffic_split["3"]']);
  });

  it('without a split, refuses to undeploy a model that still has traffic', () => {
    const change = undeploySplit({ '1': 40, '2': 60 }, {}, '1', new Set(['2']));
    expect(change.split).toBeUndefined();
    expect(change.stillServing).toContain("deployed model 1 receives 40% of the endpoint's traffic");
  });

  it('without a split, drops a model with 0% and leaves a split that never named it', () => {
    expect(undeploySplit({ '1': 0, '2': 100 }, {}, '1', new Set(['2'])).split).toEqual({ '2': 100 });
    expect(undeploySplit({ '2': 100 }, {}, '1', new Set(['2'])).split).toBeUndefined();
  });
});
