import { describe, expect, it } from 'vitest';
import {
  instancesToInferRequest,
  outputsToPredictions,
  TensorMappingError,
} from '../../../../src/gateway/prediction/tensors.js';

describe('instances → V2 tensors', () => {
  it('maps object instances to one tensor per key, shape [n, ...], datatype by content', () => {
    const req = instancesToInferRequest(
      [
        { amount: 12.5, count: 3, flag: true, city: 'Oslo', vec: [1, 2] },
        { amount: 900, count: 1, flag: false, city: 'Rome', vec: [3, 4] },
      ],
      { threshold: 0.5 },
    );
    expect(req).toEqual({
      inputs: [
        { name: 'amount', shape: [2], datatype: 'FP64', data: [12.5, 900] },
        { name: 'count', shape: [2], datatype: 'INT64', data: [3, 1] },
        { name: 'flag', shape: [2], datatype: 'BOOL', data: [true, false] },
        { name: 'city', shape: [2], datatype: 'BYTES', data: ['Oslo', 'Rome'] },
        { name: 'vec', shape: [2, 2], datatype: 'INT64', data: [1, 2, 3, 4] },
      ],
      parameters: { threshold: 0.5 },
    });
  });

  it('maps array instances to one tensor named instances, flattened row-major', () => {
    expect(
      instancesToInferRequest([
        [1, 2, 3],
        [4, 5, 6.5],
      ]).inputs,
    ).toEqual([{ name: 'instances', shape: [2, 3], datatype: 'FP64', data: [1, 2, 3, 4, 5, 6.5] }]);
    expect(instancesToInferRequest(['a', 'b']).inputs).toEqual([
      { name: 'instances', shape: [2], datatype: 'BYTES', data: ['a', 'b'] },
    ]);
  });

  it.each([
    [[[1, 2], [3]], /instances\[1\] has shape \[1\], expected \[2\]/],
    [[{ a: 1 }, { b: 1 }], /instances\[1\] has keys \[b\], expected \[a\]/],
    [[{ a: 1 }, 2], /instances\[1\] is not an object/],
    [[1, 'x'], /mixes INT64 and BYTES/],
    [[null], /holds null/],
    [[], /instances is empty/],
  ])('refuses %j', (instances, message) => {
    expect(() => instancesToInferRequest(instances as unknown[])).toThrow(TensorMappingError);
    expect(() => instancesToInferRequest(instances as unknown[])).toThrow(message);
  });
});

describe('V2 outputs → predictions', () => {
  it('one output: row i of the output, scalar for [n], array for [n, k]', () => {
    expect(outputsToPredictions([{ name: 'p', shape: [3], datatype: 'FP64', data: [0.1, 0.2, 0.3] }], 3)).toEqual([
      0.1, 0.2, 0.3,
    ]);
    expect(outputsToPredictions([{ name: 'p', shape: [2, 2, 1], datatype: 'FP64', data: [1, 2, 3, 4] }], 2)).toEqual([
      [[1], [2]],
      [[3], [4]],
    ]);
  });

  it('several outputs: an object per instance keyed by output name', () => {
    expect(
      outputsToPredictions(
        [
          { name: 'fraudProbability', shape: [2], datatype: 'FP64', data: [0.9, 0.1] },
          { name: 'label', shape: [2], datatype: 'BYTES', data: ['fraud', 'legitimate'] },
        ],
        2,
      ),
    ).toEqual([
      { fraudProbability: 0.9, label: 'fraud' },
      { fraudProbability: 0.1, label: 'legitimate' },
    ]);
  });

  it('refuses outputs that do not have one row per instance', () => {
    expect(() => outputsToPredictions([{ name: 'p', shape: [1], datatype: 'FP64', data: [1] }], 2)).toThrow(
      /first dimension must be the number of instances \(2\)/,
    );
    expect(() => outputsToPredictions([{ name: 'p', shape: [2], datatype: 'FP64', data: [1] }], 2)).toThrow(
      /1 elements for shape \[2\]/,
    );
    expect(() => outputsToPredictions([], 1)).toThrow(/no outputs/);
  });

  it('round-trips object instances through a model that echoes its inputs', () => {
    const instances = [
      { x: 1.5, tags: ['a', 'b'] },
      { x: 2.5, tags: ['c', 'd'] },
    ];
    const req = instancesToInferRequest(instances);
    expect(outputsToPredictions(req.inputs, 2)).toEqual(instances);
  });
});

describe('tensor mapping depth', () => {
  it('refuses a tensor of more dimensions than the JSON nesting limit, naming it', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 150; i++) deep = [deep];
    expect(() => instancesToInferRequest([deep])).toThrow(
      /nests arrays more than 100 deep: a tensor has at most 100 dimensions/,
    );
  });
});
