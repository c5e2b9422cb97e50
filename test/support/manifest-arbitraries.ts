/**
 * Manifests for property-based fuzzing of everything that reads them: the validators, `endpoint-operator
 * validate` and the admission webhook share these arbitraries, so the three are fuzzed with the same input.
 *
 * Most cases are near-valid: a valid manifest of one of the operator's kinds (every served version) with one
 * to four mutations (a field removed, a value of the wrong type, a long or exotic string, an out-of-range
 * number, a near-miss address/name/label, an extra field, null, nested garbage, a bad value taken from
 * examples/invalid, another apiVersion or kind). Near-valid input reaches the semantic rules behind the type
 * checks; fully random JSON and a random spec under a correct header are mixed in. Values are what a JSON or
 * YAML document can hold (YAML adds NaN and ±Infinity), so every case can be written to a file or sent in
 * an AdmissionReview.
 */
import fc from 'fast-check';
import { allKinds } from '../../src/api/kinds.js';
import { loadExamples } from './examples.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Segment = string | number;

/** A valid manifest to mutate, and the served kind it is (the webhook is asked about that kind). */
export interface Seed {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly object: { readonly [key: string]: Json };
}

/** One fuzz case: the manifest, the stored object for an UPDATE, and the kind of the seed it came from. */
export interface ManifestCase {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly object: Json;
  readonly oldObject?: Json;
}

// examples/valid has every kind but SignInSession, which only the sign-in API writes.
const signInSessionSeed = {
  apiVersion: 'pos.endpoint-operator.dev/v1',
  kind: 'SignInSession',
  metadata: {
    name: 's-0123456789abcdef01234567',
    namespace: 'endpoint-demo',
    labels: { 'pos.endpoint-operator.dev/purpose': 'refresh' },
  },
  spec: {
    purpose: 'refresh',
    subject: { kind: 'ShopUser', name: 'ana-silva' },
    tokenHash: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg',
    previousTokenHashes: ['LCa0a2j_xo_5m0U8HTBBNBNCLXBkg7-g-YpeiGJm564'],
    expiresAt: '2026-12-01T00:00:00Z',
    revoked: false,
  },
};

function identify(object: { [key: string]: Json }): Seed {
  const [group = '', version = ''] = String(object.apiVersion).split('/');
  return { group, version, kind: String(object.kind), object };
}

/** The valid examples (and a SignInSession): every kind and every served version of RegistryEndpoint. */
export const manifestSeeds: readonly Seed[] = [
  ...loadExamples('valid').flatMap((e) => e.documents.map((d) => identify(d.object as { [key: string]: Json }))),
  identify(signInSessionSeed),
];

/** `group/version Kind` of every served version of every kind: what a seed-derived case can be. */
export const servedKindKeys: readonly string[] = allKinds.flatMap((k) =>
  k.versions.filter((v) => v.served).map((v) => `${k.group}/${v.name} ${k.kind}`),
);

// Leaves (and maps) of examples/invalid: values the project already knows to be wrong at that path.
const grafts: {
  readonly apiVersion: Json;
  readonly kind: Json;
  readonly path: readonly Segment[];
  readonly value: Json;
}[] = loadExamples('invalid').flatMap((e) =>
  e.documents.flatMap((d) => {
    const o = d.object as { [key: string]: Json };
    return pathsOf(o)
      .filter((p) => p.length > 1 && p[0] === 'spec')
      .map((path) => ({
        apiVersion: o.apiVersion ?? null,
        kind: o.kind ?? null,
        path,
        value: valueAt(o, path) ?? null,
      }));
  }),
);

/** Every path in `value`, the root (`[]`) first, depth first. */
function pathsOf(value: Json): Segment[][] {
  const out: Segment[][] = [];
  const stack: { value: Json; path: Segment[] }[] = [{ value, path: [] }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    out.push(next.path);
    const v = next.value;
    const children: [Segment, Json][] = Array.isArray(v)
      ? Array.from(v, (x, i) => [i, x ?? null])
      : v !== null && typeof v === 'object'
        ? Object.entries(v)
        : [];
    for (let i = children.length - 1; i >= 0; i--) {
      const [k, x] = children[i]!;
      stack.push({ value: x, path: [...next.path, k] });
    }
  }
  return out;
}

function valueAt(value: Json, path: readonly Segment[]): Json | undefined {
  let current: Json | undefined = value;
  for (const s of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Array.isArray(current)
      ? current[Number(s)]
      : Object.prototype.hasOwnProperty.call(current, s)
        ? current[String(s)]
        : undefined;
  }
  return current;
}

/** Sets an own property even for `__proto__`, as JSON.parse and js-yaml do; appends to a shorter array rather than leave holes, which JSON cannot hold. */
function setOwn(target: Json[] | { [key: string]: Json }, key: Segment, value: Json): void {
  if (Array.isArray(target)) {
    const i = Number(key);
    if (Number.isInteger(i) && i >= 0) target[Math.min(i, target.length)] = value;
    return;
  }
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

type Op =
  | { readonly op: 'remove'; readonly at: number }
  | { readonly op: 'replace'; readonly at: number; readonly value: Json }
  | { readonly op: 'addField'; readonly at: number; readonly key: string; readonly value: Json }
  | { readonly op: 'graft'; readonly pick: number }
  | { readonly op: 'header'; readonly field: 'apiVersion' | 'kind'; readonly value: Json };

function applyOp(doc: { [key: string]: Json }, op: Op): void {
  const paths = pathsOf(doc);
  // fast-check hands out the same constant (`{ a: 'b' }`) to many cases: mutate copies only, or a later
  // mutation would change other cases, or put an object inside itself.
  const value = 'value' in op ? structuredClone(op.value) : null;
  if (op.op === 'header') {
    setOwn(doc, op.field, value);
  } else if (op.op === 'graft') {
    const candidates = grafts.filter((g) => g.apiVersion === doc.apiVersion && g.kind === doc.kind);
    const g = candidates[op.pick % Math.max(1, candidates.length)];
    if (g) setAt(doc, g.path, structuredClone(g.value));
  } else if (op.op === 'addField') {
    const containers = paths.filter((p) => {
      const v = valueAt(doc, p);
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    });
    const path = containers[op.at % containers.length] ?? [];
    const target = valueAt(doc, path);
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) setOwn(target, op.key, value);
  } else {
    const inner = paths.filter((p) => p.length > 0);
    const path = inner[op.at % Math.max(1, inner.length)];
    if (!path) return;
    if (op.op === 'replace') setAt(doc, path, value);
    else removeAt(doc, path);
  }
}

function setAt(doc: { [key: string]: Json }, path: readonly Segment[], value: Json): void {
  let current: Json = doc;
  for (const [i, s] of path.entries()) {
    if (current === null || typeof current !== 'object') return;
    if (i === path.length - 1) {
      setOwn(current, s, value);
      return;
    }
    let next = valueAt(current, [s]);
    if (next === undefined || next === null || typeof next !== 'object') {
      next = {};
      setOwn(current, s, next);
    }
    current = next;
  }
}

function removeAt(doc: { [key: string]: Json }, path: readonly Segment[]): void {
  const parent = valueAt(doc, path.slice(0, -1));
  const last = path.at(-1);
  if (parent === null || typeof parent !== 'object' || last === undefined) return;
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete parent[String(last)];
}

// ---- values -------------------------------------------------------------------------------------

const wrongType: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  0,
  1,
  -1,
  true,
  false,
  '',
  'x',
  '0',
  'true',
  'null',
  [],
  {},
  ['a'],
  [1, 2],
  { a: 'b' },
  { '': null },
);

const outOfRange: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    0.5,
    1.5,
    -0,
    100,
    101,
    65535,
    65536,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    2 ** 53 + 2,
    1e308,
    -1e308,
    5e-324,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
  ),
  fc.integer(),
  fc.double(),
);

const specialStrings = [
  '\u0000',
  'a\u0000b',
  '\u202eevil',
  'ß',
  'İ',
  'ǅ',
  '🛍️',
  'e\u0301',
  '\ufeffbom',
  'line\nbreak',
  'tab\there',
  ' padded ',
  'ＡＢＣ',
  'ﬁ',
  '\uD800',
  '\\',
  '"',
  "'",
  '%s%n',
  '${x}',
  '{{x}}',
  '<script>',
  '../..',
  '*',
  '?',
  '#',
  '&a',
  '!!str',
];
const SURROGATES = 0xe000 - 0xd800;

/**
 * The unit of fc.string's 'binary' (every code point but the surrogates, drawn as one nat, as fast-check does),
 * with an unmapper that computes the index: fast-check's own builds a map of all 1.1 million code points the
 * first time a string arbitrary tokenizes its built-in dangerous strings, seconds of every test worker's start.
 */
const binaryUnit: fc.Arbitrary<string> = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (i) => String.fromCodePoint(i < 0xd800 ? i : i + SURROGATES),
  (value) => {
    const cp = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (cp === undefined || String.fromCodePoint(cp) !== value || (cp >= 0xd800 && cp < 0xe000))
      throw new Error('not one code point outside the surrogates');
    return cp < 0xd800 ? cp : cp - SURROGATES;
  },
);

const unicodeString: fc.Arbitrary<Json> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: binaryUnit, maxLength: 20 }),
  fc.constantFrom(...specialStrings),
);

const longString: fc.Arbitrary<Json> = fc
  .tuple(
    fc.constantFrom('a', 'A', 'é', '🛍️', '0', '-', ' ', 'ア', 'ab.'),
    fc.constantFrom(63, 64, 65, 128, 129, 253, 254, 255, 512, 513, 4096, 100_000),
  )
  .map(([unit, n]) => unit.repeat(n));

/** Near misses of the operator's formats: addresses, resource names, label/annotation keys, emails, hashes, times. */
const nearMiss: fc.Arbitrary<Json> = fc.constantFrom<Json>(
  // addresses
  '8.8.8',
  '8.8.8.8:53',
  '256.1.1.1',
  '01.2.3.4',
  '1.2.3.4/24',
  '[::1]',
  '[::1]:8080',
  'fe80::1%eth0',
  '::ffff:1.2.3.4',
  '::',
  '::1',
  '1::2::3',
  'test:bad:address',
  'localhost',
  '10.0.0.1 ',
  ' 10.0.0.1',
  'a'.repeat(46),
  '2001:db8::' + '0'.repeat(40),
  // resource names
  'projects/p/locations/l/namespaces/n/services/s',
  'projects/p/locations/l/namespaces/n/services/s/endpoints/e',
  'projects/P/locations/l/namespaces/n/services/s/endpoints/e',
  'projects/p/locations/l/namespaces/n/services/s/endpoints/',
  'projects//locations/l',
  'projects/p/locations/l/namespaces/n/services/s/endpoints/e/x',
  'projects/123/global/networks/n',
  'projects/0123/global/networks/n',
  'projects/my-project/global/networks/n',
  'projects/123/locations/global/networks/n',
  'projects/123/locations/us-east1/networks/n',
  'bq://p.d.t',
  'bq://p',
  'gs://p.d.t',
  'bq://p.d.t.x',
  'projects/p/locations/l/keyRings/r/cryptoKeys/k',
  'projects/p/models/m',
  // keys and label values
  'a/b/c',
  '/a',
  'a/',
  'example.com/',
  'EXAMPLE.com/x',
  'endpoint-operator.dev/x',
  'x.endpoint-operator.io/y',
  '-a',
  'a-',
  '_a',
  '1a',
  'チーム',
  'Équipe',
  'a'.repeat(64),
  'a'.repeat(63),
  // ids, emails, hashes, times, enums
  '0',
  '00',
  '12345678901',
  '4712380917',
  '-1',
  '1e3',
  'ana@example.com',
  'Ana@Example.com',
  'ana@',
  '@example.com',
  'a b@example.com',
  `${'a'.repeat(65)}@example.com`,
  'a'.repeat(43),
  'a'.repeat(44),
  '2026-13-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-12-01',
  'now',
  'superadmin',
  'owner',
  'disabled',
  'Active',
  'shop-selection',
  'AdminUser',
  'RefreshTokenReuse',
);

const deepNest: fc.Arbitrary<Json> = fc.tuple(fc.integer({ min: 10, max: 60 }), fc.boolean()).map(([depth, arrays]) => {
  let v: Json = 'bottom';
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
});

const garbage: fc.Arbitrary<Json> = fc.oneof(fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>, deepNest);

const anyValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: wrongType },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: longString },
  { weight: 3, arbitrary: unicodeString },
  { weight: 3, arbitrary: outOfRange },
  { weight: 5, arbitrary: nearMiss },
  { weight: 2, arbitrary: garbage },
);

const fieldKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'unknownField',
    'status',
    'etag',
    'id',
    'name',
    'network',
    'metadata',
    'annotations',
    'deletionTimestamp',
    '__proto__',
    'constructor',
    'toString',
    '',
    ' ',
    '.',
    '[0]',
    'a.b',
    'a]b',
  ),
  nearMiss.filter((v): v is string => typeof v === 'string'),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
);

const statusValue: fc.Arbitrary<Json> = fc.record(
  { etag: fc.oneof(fc.constant('e1'), fc.string()), id: fc.stringMatching(/^[0-9]{1,10}$/) },
  { requiredKeys: [] },
);

const apiVersions = [...new Set(allKinds.flatMap((k) => k.versions.map((v) => `${k.group}/${v.name}`)))];
const kindNames = allKinds.map((k) => k.kind);
const headerValue = (field: 'apiVersion' | 'kind'): fc.Arbitrary<Json> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom<Json>(...(field === 'apiVersion' ? apiVersions : kindNames)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<Json>(
        'v1',
        'apps/v1',
        'prediction.endpoint-operator.dev/v2',
        'registry.endpoint-operator.dev',
        '/v1',
        '',
        'List',
        'predictionendpoint',
        'Secret',
      ),
    },
    { weight: 1, arbitrary: wrongType },
  );

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('remove' as const), at: fc.nat() }) },
  { weight: 8, arbitrary: fc.record({ op: fc.constant('replace' as const), at: fc.nat(), value: anyValue }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('addField' as const),
      at: fc.nat(),
      key: fieldKey,
      value: fc.oneof(anyValue, statusValue),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('graft' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc
      .record({
        op: fc.constantFrom('header' as const),
        field: fc.constantFrom('apiVersion' as const, 'kind' as const),
      })
      .chain((h) => headerValue(h.field).map((value) => ({ ...h, value }))),
  },
);

const seedArbitrary: fc.Arbitrary<Seed> = fc.constantFrom(...manifestSeeds);

function mutated(seed: Seed, ops: readonly Op[]): { [key: string]: Json } {
  const doc = structuredClone(seed.object) as { [key: string]: Json };
  for (const op of ops) applyOp(doc, op);
  return doc;
}

/** A manifest of `seed`'s kind: unchanged, mutated, or with a random spec. */
function objectOf(seed: Seed): fc.Arbitrary<Json> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(null).map(() => structuredClone(seed.object) as Json) },
    { weight: 14, arbitrary: fc.array(opArbitrary, { minLength: 1, maxLength: 4 }).map((ops) => mutated(seed, ops)) },
    { weight: 2, arbitrary: garbage.map((spec) => ({ ...structuredClone(seed.object), spec }) as Json) },
  );
}

/** Fully random JSON, sometimes dressed with a header of ours so that it reaches a validator. */
const randomDocument: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  fc.dictionary(fieldKey, garbage, { maxKeys: 6 }),
  fc.record(
    {
      apiVersion: headerValue('apiVersion'),
      kind: headerValue('kind'),
      metadata: fc.oneof(garbage, fc.record({ name: anyValue, namespace: anyValue }, { requiredKeys: [] })),
      spec: garbage,
    },
    { requiredKeys: [] },
  ),
);

/**
 * The fuzz case: a seed's kind with a near-valid, unchanged or random-spec manifest (about 9 in 10) or
 * random JSON, and, half of the time, an old object (the seed mutated independently, so immutable
 * fields and etags change between the two) as an UPDATE would carry.
 */
export const manifestCaseArbitrary: fc.Arbitrary<ManifestCase> = seedArbitrary.chain((seed) =>
  fc
    .record({
      object: fc.oneof({ weight: 9, arbitrary: objectOf(seed) }, { weight: 1, arbitrary: randomDocument }),
      oldObject: fc.option(
        fc.oneof(
          { weight: 3, arbitrary: fc.array(opArbitrary, { maxLength: 2 }).map((ops) => mutated(seed, ops) as Json) },
          { weight: 1, arbitrary: randomDocument },
        ),
        { nil: undefined, freq: 2 },
      ),
    })
    .map(({ object, oldObject }) => ({
      group: seed.group,
      version: seed.version,
      kind: seed.kind,
      object,
      ...(oldObject === undefined ? {} : { oldObject }),
    })),
);

/** Just the manifest. */
export const manifestArbitrary: fc.Arbitrary<Json> = manifestCaseArbitrary.map((c) => c.object);

// ---- YAML text ----------------------------------------------------------------------------------

function aliasBomb(levels: number, target: string): string {
  const lines = ['x0: &x0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < levels; i++)
    lines.push(`x${i}: &x${i} [${Array.from({ length: 9 }, () => `*x${i - 1}`).join(',')}]`);
  return `${lines.join('\n')}\n${target.replace(/BOMB/g, `*x${levels - 1}`)}`;
}

/** Well-formed YAML that exercises what JSON cannot say: non-object documents, aliases (a "billion laughs" too), tags, block scalars. */
export const yamlFeatureDocument: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '- just\n- a list\n',
    'plain scalar\n',
    '42\n',
    '~\n',
    'null\n',
    '[]\n',
    '{}\n',
    '""\n',
    'true\n',
    '!!str 123\n',
    '|\n  block\n  scalar\n',
    '# only a comment\n',
  ),
  fc
    .tuple(
      fc.integer({ min: 3, max: 9 }),
      fc.constantFrom(
        'metadata: {name: bomb, namespace: n, labels: BOMB}\nspec: {displayName: BOMB, labels: BOMB}',
        'metadata: {name: bomb}\nspec: {name: BOMB, address: BOMB, annotations: {a: BOMB}, port: BOMB}',
        'metadata: {name: bomb}\nspec: {email: x@y.z, displayName: d, passwordSecretRef: {name: s, key: k}, memberships: BOMB}',
      ),
      fc.constantFrom(...servedKindKeys),
    )
    .map(([levels, body, key]) => {
      const [apiVersion, kind] = key.split(' ');
      return aliasBomb(levels, `apiVersion: ${apiVersion}\nkind: ${kind}\n${body}`) + '\n';
    }),
  fc.constantFrom(...servedKindKeys).map((key) => {
    const [apiVersion, kind] = key.split(' ');
    return `apiVersion: !!str ${apiVersion}\nkind: "${kind}"\nmetadata: &m {name: anchored, namespace: n}\nspec:\n  displayName: >-\n    folded\n    text\n  description: *m\n  name: !!str 12\n  port: !!int "8080"\n`;
  }),
);

/** Texts no YAML 1.2 reader accepts: written as files of their own, so every run has unreadable input. */
export const unreadableYamlTexts: readonly string[] = [
  'apiVersion: v1\nkind: [ConfigMap\n',
  'a: 1\na: 2\n',
  'a:\n\t- tab\n',
  'a: *undefined_alias\n',
  'a: !!js/function "function () {}"\n',
  'key: "unterminated\n',
  "key: 'unterminated\n",
  'a: b: c\n',
  '- a\nb: c\n',
  '%YAML 9.9\n---\na: 1\n',
  'a: "\\q bad escape"\n',
  '{a: 1}}\n',
  `data: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
  'a: 1\n\u0000\n',
  '? [a, b]\n: c\n? [a, b]\n: d\n',
];

/** Texts that are often not valid YAML; the loader must name the file and the line, never crash. */
export const yamlGarbageText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...unreadableYamlTexts),
  fc.string({ unit: binaryUnit, minLength: 1, maxLength: 200 }),
  fc
    .tuple(
      fc.jsonValue({ maxDepth: 2 }),
      fc.nat(),
      fc.constantFrom('[', '{', '"', ':', '\t', '*', '&', '!', '%', '@', '`'),
    )
    .map(([v, at, junk]) => {
      const text = JSON.stringify(v) ?? 'null';
      const i = at % (text.length + 1);
      return `${text.slice(0, i)}${junk}${text.slice(i)}\n`;
    }),
);
