import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PredictionRecord } from '../../../src/gateway/prediction/record.js';
import { RequestLogger, truncateBody } from '../../../src/gateway/request-log.js';

function capture(): { log: pino.Logger; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write: (chunk: Buffer, _e, done) => {
        records.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { log, records };
}

const record = (over: Partial<PredictionRecord> = {}): PredictionRecord => ({
  namespace: 'ns',
  endpoint: 'fraud',
  resourceName: 'projects/p/locations/l/endpoints/fraud',
  deployedModelId: '1',
  method: 'predict',
  code: 200,
  latencyMs: 1.5,
  request: Buffer.from('{"instances":[1]}'),
  response: '{"predictions":[0.5]}',
  ...over,
});

describe('truncateBody', () => {
  it('keeps bodies up to the limit and cuts longer ones at a character boundary', () => {
    expect(truncateBody(Buffer.from('abc'), 3)).toEqual({ text: 'abc', truncated: false });
    expect(truncateBody('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
    expect(truncateBody('aé', 2)).toEqual({ text: 'a', truncated: true }); // é is 2 bytes: not cut in half
    expect(truncateBody(undefined, 4)).toEqual({ text: '', truncated: false });
  });
});

describe('RequestLogger', () => {
  it('samples by the endpoint config: never when disabled, by samplingRate when enabled', () => {
    const draws = [0.05, 0.5, 0.95];
    let i = 0;
    const logger = new RequestLogger(capture().log, {
      payloadLimitBytes: 100,
      maxRecordsPerSecond: 10,
      random: () => draws[i++ % 3] ?? 0,
    });
    expect(logger.sample({ enabled: false, samplingRate: 1 })).toBe(false);
    expect([0, 1, 2].map(() => logger.sample({ enabled: true, samplingRate: 0.5 }))).toEqual([true, false, false]);
  });

  it('writes one structured record per sampled call, bodies truncated and flagged', () => {
    const { log, records } = capture();
    new RequestLogger(log, { payloadLimitBytes: 10, maxRecordsPerSecond: 10 }).write(record());
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      msg: 'prediction',
      namespace: 'ns',
      endpoint: 'fraud',
      endpointName: 'projects/p/locations/l/endpoints/fraud',
      deployedModelId: '1',
      method: 'predict',
      code: 200,
      latencyMs: 1.5,
      request: '{"instance',
      requestTruncated: true,
      response: '{"predicti',
      responseTruncated: true,
    });
  });

  it('caps records per second and counts the dropped ones in the next record', () => {
    const { log, records } = capture();
    let now = 0;
    const logger = new RequestLogger(log, { payloadLimitBytes: 100, maxRecordsPerSecond: 2, now: () => now });
    for (let k = 0; k < 5; k++) logger.write(record());
    expect(records).toHaveLength(2);
    now = 1000;
    logger.write(record());
    expect(records).toHaveLength(3);
    expect(records[2]?.droppedSamples).toBe(3);
  });
});
