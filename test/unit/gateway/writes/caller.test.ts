import { describe, expect, it } from 'vitest';
import { checkWritesServed } from '../../../../src/gateway/writes/caller.js';
import { refusalOf } from '../../../../src/gateway/writes/refuse.js';

const auth = (enabled: boolean) => ({ enabled }) as never;

describe('who may write', () => {
  it('refuses every write when the chart turned them off, naming the value', () => {
    expect(() => checkWritesServed({ writesEnabled: false, auth: auth(true) })).toThrowError(
      /gateway\.apiWrites\.enabled/,
    );
  });
  it('refuses writes on a gateway without authentication', () => {
    expect(() => checkWritesServed({ writesEnabled: true, auth: auth(false) })).toThrowError(
      /writes need an authenticated caller/,
    );
    expect(() => checkWritesServed({ writesEnabled: true, auth: auth(true) })).not.toThrow();
  });
  it('refuses where the refuse annotation is, naming it and where', () => {
    const ns = { metadata: { name: 'prod', annotations: { 'endpoint-operator.dev/api-writes': 'refuse' } } };
    const err = refusalOf(ns, 'Namespace "prod"');
    expect(err?.status).toBe('FAILED_PRECONDITION');
    expect(err?.message).toContain('Namespace "prod" has the annotation endpoint-operator.dev/api-writes: refuse');
    expect(
      refusalOf({ metadata: { annotations: { 'endpoint-operator.dev/api-writes': 'allow' } } }, 'x'),
    ).toBeUndefined();
    expect(refusalOf(undefined, 'x')).toBeUndefined();
  });
});
