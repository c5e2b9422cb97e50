import { describe, expect, it } from 'vitest';
import {
  compileFilter,
  FilterSyntaxError,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  type FilterableEndpoint,
} from '../../../../src/gateway/registry/filter.js';

const S = 'projects/my-shop/locations/us-east1/namespaces/ns/services/svc';
const endpoints: Record<string, FilterableEndpoint> = {
  a: { name: `${S}/endpoints/a`, address: '10.0.0.1', port: 80, annotations: { owner: 'sd', protocol: 'gRPC' } },
  b: {
    name: `${S}/endpoints/b`,
    address: '10.0.0.2',
    port: 8080,
    annotations: { owner: 'team', 'example.com/zone': 'us-east1-b' },
  },
  c: { name: `${S}/endpoints/c`, address: '2001:db8::1', port: 443, annotations: {} },
  d: { name: `${S}/endpoints/d`, address: '', port: 0, annotations: { protocol: 'http 2' } },
};

function run(filter: string): string {
  const f = compileFilter(filter);
  return Object.entries(endpoints)
    .filter(([, e]) => f.matches(e))
    .map(([k]) => k)
    .join('');
}

describe('endpoint filter: expressions and their results', () => {
  it.each([
    // empty
    ['', 'abcd'],
    ['   ', 'abcd'],
    // every operator on strings
    ['address=10.0.0.1', 'a'],
    ['address!=10.0.0.1', 'bcd'],
    ['address<10.0.0.2', 'ad'],
    ['address<=10.0.0.2', 'abd'],
    ['address>10.0.0.1', 'bc'],
    ['address>=10.0.0.1', 'abc'],
    ['address:10.0.0.2', 'b'],
    [`name>${S}/endpoints/b`, 'cd'],
    [`name=${S}/endpoints/c`, 'c'],
    // port compares as an integer (8080 > 443 although "8080" < "443" as text)
    ['port>443', 'b'],
    ['port>=443', 'bc'],
    ['port<443', 'ad'],
    ['port<=80', 'ad'],
    ['port=8080', 'b'],
    ['port!=80', 'bcd'],
    ['port:443', 'c'],
    // annotations: a comparison on a missing key is false, whatever the operator
    ['annotations.owner=sd', 'a'],
    ['annotations.owner!=sd', 'b'],
    ['annotations.owner>sd', 'b'],
    ['annotations.owner<team', 'a'],
    ['annotations.owner:team', 'b'],
    ['annotations.example.com/zone=us-east1-b', 'b'],
    // presence: bare field, has with *, annotations:KEY
    ['annotations.owner', 'ab'],
    ['annotations:owner', 'ab'],
    ['annotations:protocol', 'ad'],
    ['annotations.owner:*', 'ab'],
    ['annotations', 'abd'],
    ['address', 'abc'],
    ['address:*', 'abc'],
    ['port', 'abc'],
    // quoting
    ['address="2001:db8::1"', 'c'],
    ["address='2001:db8::1'", 'c'],
    ['annotations.protocol="http 2"', 'd'],
    ['annotations.protocol="http\\ 2"', 'd'],
    ['annotations.owner = "sd"', 'a'],
    // connectors
    ['annotations.owner=sd AND port=80', 'a'],
    ['annotations.owner=sd AND port=8080', ''],
    ['annotations.owner=sd OR port=443', 'ac'],
    ['NOT annotations.owner=sd', 'bcd'],
    ['NOT annotations:owner', 'cd'],
    ['NOT NOT port=80', 'a'],
    ['annotations.owner!=sd AND annotations.example.com/zone=us-east1-b', 'b'],
    // precedence (AIP-160): NOT > OR > AND, so `x AND y OR z` is `x AND (y OR z)`
    ['port=443 AND port=80 OR address=2001:db8::1'.replace('2001:db8::1', '"2001:db8::1"'), 'c'],
    ['port=80 OR port=443 AND annotations:owner', 'a'],
    ['(port=80 OR port=443) AND annotations:owner', 'a'],
    ['port=80 OR (port=443 AND annotations:owner)', 'a'],
    ['NOT port=80 AND annotations:owner', 'b'],
    ['NOT (port=80 OR port=8080)', 'cd'],
    ['((annotations.owner=team))', 'b'],
    // unknown fields match nothing, even under NOT
    ['doesnotexist.foo=bar', ''],
    ['NOT doesnotexist=bar', ''],
    ['port=80 OR metadata.owner=sd', ''],
    // connectors are upper case only; words that look like keywords are values after an operator
    ['annotations.owner=AND', ''],
  ])('%s → %s', (filter, expected) => {
    expect(run(filter)).toBe(expected);
  });
});

describe('endpoint filter: syntax errors name the position', () => {
  it.each([
    ['port=', 6, 'expected a value'],
    ['=80', 1, 'expected a field'],
    ['port=80 AND', 12, 'expected a field'],
    ['port=80 and port=443', 9, 'expected AND, OR'],
    ['port=80 port=443', 9, 'expected AND, OR'],
    ['(port=80', 9, "expected ')'"],
    ['port=80)', 8, "unbalanced ')'"],
    ['annotations.owner="sd', 19, 'unterminated string'],
    ['port=eighty', 6, 'port is compared with an integer'],
    ['port=-1', 6, 'port is compared with an integer'],
    ['annotations=sd', 12, "annotations takes only ':'"],
    ['address!10.0.0.1', 8, "unexpected '!'"],
    ['NOT', 4, 'expected a field'],
    ['port=80 OR OR port=1', 12, 'expected a field'],
    ['()', 2, 'expected a field'],
  ])('%s → position %i', (filter, position, detail) => {
    let caught: unknown;
    try {
      compileFilter(filter);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(FilterSyntaxError);
    const e = caught as FilterSyntaxError;
    expect(e.position).toBe(position);
    expect(e.message).toContain(`position ${position}`);
    expect(e.detail).toContain(detail);
  });
});

describe('endpoint filter: bounded by construction', () => {
  it('refuses nesting deeper than MAX_FILTER_DEPTH at the offending position, however deep the text goes', () => {
    expect(run(`${'('.repeat(MAX_FILTER_DEPTH)}port=80${')'.repeat(MAX_FILTER_DEPTH)}`)).toBe('a');
    const tooDeep = `${'('.repeat(MAX_FILTER_DEPTH + 1)}port=80${')'.repeat(MAX_FILTER_DEPTH + 1)}`;
    expect(() => compileFilter(tooDeep)).toThrow(
      new FilterSyntaxError(
        MAX_FILTER_DEPTH + 1,
        `the filter nests parentheses and NOT more than ${MAX_FILTER_DEPTH} levels deep; the limit is ${MAX_FILTER_DEPTH}`,
      ),
    );
    expect(() => compileFilter('NOT '.repeat(MAX_FILTER_DEPTH + 1) + 'port=80')).toThrow(/more than 100 levels deep/);
    expect(() => compileFilter('('.repeat(4000))).toThrow(FilterSyntaxError);
  });

  it('reads long AND/OR chains flat (no recursion per connector) and refuses text over MAX_FILTER_LENGTH', () => {
    const chain = Array.from({ length: 300 }, () => 'port>=1').join(' AND ');
    expect(chain.length).toBeLessThanOrEqual(MAX_FILTER_LENGTH);
    expect(run(chain)).toBe('abc');
    expect(run(Array.from({ length: 300 }, (_, i) => `port=${i + 440}`).join(' OR '))).toBe('c');
    const tooLong = Array.from({ length: 20_000 }, () => 'port=80').join(' AND ');
    expect(() => compileFilter(tooLong)).toThrow(
      `invalid filter at position ${MAX_FILTER_LENGTH + 1}: the filter is ${tooLong.length} characters long; the limit is ${MAX_FILTER_LENGTH}`,
    );
  });
});
