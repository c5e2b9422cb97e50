/**
 * Issue 17, items 4, 6 and 8: project numbers, text that is not Unicode, and messages that state
 * lengths in the rule's unit, cut long values between code points and show numbers as written.
 */
import { describe, expect, it } from 'vitest';
import { fieldErrors, formatFieldError, renderValue } from '../../../src/api/common/field-error.js';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { keyInPath, truncateText } from '../../../src/api/common/text.js';
import { validateObject } from '../../../src/api/validate-object.js';

const pe = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'PredictionEndpoint',
  metadata: { name: 'x', namespace: 'ns', ...metadata },
  spec: { displayName: 'd', ...spec },
});
const ENDPOINT = 'projects/my-project/locations/us-east1/namespaces/payments/services/checkout/endpoints/checkout-1';
const re = (version: string, spec: Record<string, unknown>) => ({
  apiVersion: `registry.endpoint-operator.dev/${version}`,
  kind: 'RegistryEndpoint',
  metadata: { name: 'x', namespace: 'ns' },
  spec: { name: ENDPOINT, ...spec },
});
const verdict = (o: unknown) => validateObject(o, undefined, defaultValidationOptions);
const lines = (o: unknown) => verdict(o).errors.map(formatFieldError);

function isWellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

describe('project numbers have no leading zero, in both areas', () => {
  it('PredictionEndpoint spec.network', () => {
    expect(lines(pe({ network: 'projects/0123/global/networks/vpc' }))).toEqual([
      expect.stringContaining(
        'spec.network: Invalid value: "projects/0123/global/networks/vpc": must be projects/{project number}/global/networks/{network name}: the project number "0123" has a leading zero',
      ),
    ]);
    expect(lines(pe({ network: 'projects/123/global/networks/vpc' }))).toEqual([]);
  });

  it('RegistryEndpoint v1beta1 spec.network', () => {
    expect(lines(re('v1beta1', { network: 'projects/0123/locations/global/networks/vpc' }))).toEqual([
      expect.stringContaining('the project number "0123" has a leading zero'),
    ]);
    expect(lines(re('v1beta1', { network: 'projects/123/locations/global/networks/vpc' }))).toEqual([]);
  });
});

describe('text that is not Unicode (a lone surrogate) is refused, naming the field', () => {
  it.each([
    ['a value', pe({ displayName: 'fraud \ud83d' }), 'spec.displayName'],
    ['a low surrogate alone', pe({ description: '\udc00x' }), 'spec.description'],
    ['a map key', pe({ labels: { 'team\ud800': 'x' } }), 'spec.labels[team\ud800]'],
    ['a metadata annotation', pe({}, { annotations: { note: '\ud800' } }), 'metadata.annotations[note]'],
    ['a registry annotation value', re('v1', { annotations: { team: 'a\udbff' } }), 'spec.annotations[team]'],
  ])('%s', (_what, o, field) => {
    const errors = verdict(o).errors.filter((e) => /not Unicode text/.test(e.detail));
    expect(errors.map((e) => e.field)).toEqual([field]);
    expect(errors[0]?.detail).toMatch(
      /lone UTF-16 surrogate \(\\u[0-9a-f]{4}, a (high|low) surrogate without its (low|high) half\) at character \d+, which the apiserver would store as U\+FFFD/,
    );
  });

  it('accepts a well-formed surrogate pair (an emoji)', () => {
    expect(lines(pe({ displayName: 'fraud 🚀', labels: { チーム: 'リスク' } }))).toEqual([]);
  });

  it('walks a YAML alias once (a shared node is not walked again)', () => {
    const shared: Record<string, unknown> = { a: 'x' };
    let node: Record<string, unknown> = shared;
    for (let i = 0; i < 40; i++) node = { l: node, r: node };
    const start = Date.now();
    verdict(pe({ extra: node }));
    expect(Date.now() - start).toBeLessThan(1000);
  });
});

describe('lengths in the unit of the rule', () => {
  it('a 129-character displayName is "129 characters; at most 128", whatever its UTF-16 length', () => {
    expect(verdict(pe({ displayName: 'a'.repeat(129) })).errors[0]?.detail).toBe('129 characters; at most 128');
    const emoji = verdict(pe({ displayName: '🚀'.repeat(129) })).errors[0];
    expect(emoji?.detail).toBe('129 characters; at most 128');
    expect(renderValue(emoji?.value)).toMatch(/ \(129 characters\)$/);
  });

  it("label keys and values in code points, the seed's unit for them", () => {
    expect(verdict(pe({ labels: { team: 'é'.repeat(65) } })).errors[0]?.detail).toBe('65 code points; at most 64');
  });

  it('tooLong states the length in its unit (bytes when the rule counts bytes)', () => {
    expect(fieldErrors.tooLong('f', 'é'.repeat(3), 4, 'UTF-8 bytes').detail).toBe('6 UTF-8 bytes; at most 4');
    expect(fieldErrors.tooLong('f', 7, 4).detail).toBe('must have at most 4 characters');
  });
});

describe('truncation', () => {
  it('never splits a surrogate pair, in a value or in a key of a field path', () => {
    for (let n = 1; n < 200; n += 7) {
      const text = `${'x'.repeat(n % 3)}${'🚀'.repeat(n)}`;
      expect(isWellFormed(renderValue(text))).toBe(true);
      expect(isWellFormed(keyInPath(text))).toBe(true);
      expect(isWellFormed(truncateText(text, 10))).toBe(true);
    }
  });

  it('keeps a long key recognisable: its start and its end', () => {
    const a = `${'x'.repeat(300)}-team-a`;
    const b = `${'x'.repeat(300)}-team-b`;
    expect(keyInPath(a)).not.toBe(keyInPath(b));
    expect(keyInPath(a)).toMatch(/^x+…x*-team-a$/);
    expect(Array.from(keyInPath(a))).toHaveLength(100);
    const errors = verdict(pe({ labels: { [a]: 'v', [b]: 'v' } })).errors.map((e) => e.field);
    expect(new Set(errors).size).toBe(2);
  });
});

describe('messages stay short whatever the input', () => {
  it('cuts a huge name segment or project number in a detail, between code points', () => {
    const huge = `projects/${'🚀'.repeat(100_000)}/locations/l/namespaces/n/services/s/endpoints/e`;
    const detail = verdict(re('v1', { name: huge })).errors[0]?.detail ?? '';
    expect(detail.length).toBeLessThan(1000);
    expect(isWellFormed(detail)).toBe(true);
    const zeros =
      verdict(re('v1beta1', { network: `projects/0${'1'.repeat(100_000)}/locations/global/networks/n` })).errors[0]
        ?.detail ?? '';
    expect(zeros.length).toBeLessThan(1000);
  });

  it('cuts the JSON of an object value without splitting an emoji', () => {
    for (let pad = 0; pad < 6; pad++)
      expect(isWellFormed(renderValue({ k: `${'x'.repeat(pad)}${'🚀'.repeat(60)}` }))).toBe(true);
  });
});

describe('non-finite numbers as written', () => {
  it('shows .inf, -.inf and .nan instead of null', () => {
    expect(renderValue(Infinity)).toBe('.inf');
    expect(renderValue(-Infinity)).toBe('-.inf');
    expect(renderValue(Number.NaN)).toBe('.nan');
    expect(renderValue({ port: Infinity })).toBe('{"port":.inf}');
  });

  it('says why such a number is refused', () => {
    const out = lines(re('v1', { port: Infinity }));
    expect(out).toEqual([expect.stringContaining('spec.port: Invalid value: .inf')]);
    expect(lines(pe({ predictRequestResponseLoggingConfig: { samplingRate: Number.NaN } }))).toEqual([
      'spec.predictRequestResponseLoggingConfig.samplingRate: Invalid value: .nan: must be a finite number: JSON has no .inf or .nan, so kubectl cannot send this manifest',
    ]);
  });
});
