import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, computeEtag, jsonEqual } from '../../../../../src/api/prediction/v1/etag.js';
import {
  bigQueryUriProblem,
  DEFAULT_PROJECT_TEMPLATE,
  endpointNameOf,
  endpointResourceName,
  endpointUrl,
  gatewayUrlProblem,
  LABEL_KEY,
  LABEL_VALUE,
  projectTemplateProblem,
} from '../../../../../src/api/prediction/v1/names.js';
import { compareIds, trafficSplitProblems } from '../../../../../src/api/prediction/v1/traffic.js';
import { nextDeployedModelId } from '../../../../../src/reconcilers/deployed-model-ids.js';

describe('endpointResourceName', () => {
  it('builds projects/{project}/locations/{location}/endpoints/{name}', () => {
    expect(endpointResourceName('demo', 'us-central1', 'fraud-scoring')).toBe(
      'projects/demo/locations/us-central1/endpoints/fraud-scoring',
    );
  });
});

describe('computeEtag', () => {
  const spec = { displayName: 'Ep', trafficSplit: { '1': 60, '2': 40 }, labels: { a: 'x', b: 'y' } };

  it('does not depend on key order at any level', () => {
    const reordered = { labels: { b: 'y', a: 'x' }, trafficSplit: { '2': 40, '1': 60 }, displayName: 'Ep' };
    expect(computeEtag(reordered)).toBe(computeEtag(spec));
  });

  it('ignores spec.etag itself and undefined members', () => {
    expect(computeEtag({ ...spec, etag: 'whatever' })).toBe(computeEtag(spec));
    expect(computeEtag({ ...spec, description: undefined })).toBe(computeEtag(spec));
  });

  it('changes with any value of the spec', () => {
    expect(computeEtag({ ...spec, displayName: 'Ep2' })).not.toBe(computeEtag(spec));
    expect(computeEtag({ ...spec, trafficSplit: { '1': 40, '2': 60 } })).not.toBe(computeEtag(spec));
    expect(computeEtag({ ...spec, labels: { a: 'x' } })).not.toBe(computeEtag(spec));
  });

  it('is a short URL-safe string', () => {
    expect(computeEtag(spec)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('is stable over key order for arbitrary JSON', () => {
    const shuffle = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(shuffle);
      if (v !== null && typeof v === 'object')
        return Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, shuffle(x)]),
        );
      return v;
    };
    fc.assert(
      fc.property(fc.jsonValue(), (v) => computeEtag(shuffle(v)) === computeEtag(v)),
      { numRuns: 300 },
    );
  });

  it('canonicalJson sorts keys', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
  });
});

describe('jsonEqual', () => {
  it('compares JSON regardless of key order and undefined members', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 'x', d: null }] }, { b: [1, { d: null, c: 'x' }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, z: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({ a: null }, { a: {} })).toBe(false);
  });

  it('agrees with canonicalJson on arbitrary JSON', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.jsonValue(),
        (a, b) => jsonEqual(a, b) === (canonicalJson(a) === canonicalJson(b)),
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (a) => jsonEqual(a, structuredClone(a))),
      { numRuns: 300 },
    );
  });

  it('treats absurdly deep values as different instead of overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(jsonEqual(deep, deep)).toBe(true);
    expect(jsonEqual(deep, structuredClone({ a: 1 }))).toBe(false);
  });
});

describe('trafficSplitProblems', () => {
  it('lists split keys that name no deployed model, in id order', () => {
    expect(trafficSplitProblems({ '10': 50, '9': 25, '3': 25 }, ['3'])).toEqual(['9', '10']);
    expect(trafficSplitProblems({ '1': 100 }, new Set(['1', '2']))).toEqual([]);
    expect(trafficSplitProblems({}, [])).toEqual([]);
    expect(trafficSplitProblems(undefined, ['1'])).toEqual([]);
  });

  it('compareIds orders digit strings numerically', () => {
    expect(['100', '20', '3', '21'].sort(compareIds)).toEqual(['3', '20', '21', '100']);
  });
});

describe('nextDeployedModelId', () => {
  it('is deterministic for a seed and valid under the 1–10 digit rule', () => {
    const id = nextDeployedModelId([], 'uid-1');
    expect(id).toMatch(/^[1-9][0-9]{9}$/);
    expect(nextDeployedModelId([], 'uid-1')).toBe(id);
    expect(nextDeployedModelId([], 'uid-2')).not.toBe(id);
  });

  it('never returns a used id', () => {
    const first = nextDeployedModelId([], 'seed');
    const second = nextDeployedModelId([first], 'seed');
    expect(second).not.toBe(first);
    const third = nextDeployedModelId([first, second], 'seed');
    expect([first, second]).not.toContain(third);
    fc.assert(
      fc.property(fc.string(), fc.array(fc.string()), (seed, others) => {
        const used = [...others, nextDeployedModelId([], seed)];
        return !used.includes(nextDeployedModelId(used, seed));
      }),
      { numRuns: 300 },
    );
  });
});

describe('bigQueryUriProblem', () => {
  it('accepts project, dataset and table forms, with a domain-scoped project', () => {
    for (const uri of [
      'bq://abcdef',
      'bq://my-project-123',
      'bq://my-project.ds_1',
      'bq://my-project.ds_1.table 1',
      'bq://example.com:my-project.ds.t',
    ]) {
      expect(bigQueryUriProblem(uri), uri).toBeUndefined();
    }
  });

  it('explains what is wrong', () => {
    expect(bigQueryUriProblem('gs://x')).toMatch(/bq:\/\//);
    expect(bigQueryUriProblem('bq://abc')).toMatch(/project/);
    expect(bigQueryUriProblem(`bq://${'a'.repeat(31)}`)).toMatch(/project/);
    expect(bigQueryUriProblem('bq://my-project.d-s')).toMatch(/dataset/);
    expect(bigQueryUriProblem(`bq://my-project.${'d'.repeat(1025)}`)).toMatch(/dataset/);
    expect(bigQueryUriProblem('bq://my-project.ds.t.u')).toMatch(/too many parts/);
    expect(bigQueryUriProblem('bq://my-project.ds.t/x')).toMatch(/table/);
    expect(bigQueryUriProblem(`bq://my-project.ds.${'é'.repeat(513)}`)).toMatch(/1024 UTF-8 bytes/);
    expect(bigQueryUriProblem('bq://Example.com:my-project')).toMatch(/domain/);
  });
});

describe('label character classes', () => {
  it('follow the documented decision', () => {
    for (const key of ['team', 'équipe', 'チーム', '数据', 'отдел', 'विभाग', 'a-b_c9', 'ß'])
      expect(LABEL_KEY.test(key), key).toBe(true);
    for (const key of ['Team', 'Ǆ', '1a', '-a', '_a', 'a b', 'a.b', 'a/b', '🚀', 'ー'])
      expect(LABEL_KEY.test(key), key).toBe(false);
    for (const value of ['', '1', '-', '_x', '٣', 'ー']) expect(LABEL_VALUE.test(value), value).toBe(true);
    for (const value of ['A', 'a b', 'a:b', '🚀']) expect(LABEL_VALUE.test(value), value).toBe(false);
  });
});

describe('endpoint names (unique in the cluster) and URLs', () => {
  it('puts the namespace in the project, through the --project template', () => {
    expect(endpointNameOf({ namespace: 'risk', name: 'fraud' }, DEFAULT_PROJECT_TEMPLATE, 'us-central1')).toBe(
      'projects/risk/locations/us-central1/endpoints/fraud',
    );
    expect(endpointNameOf({ namespace: 'risk', name: 'fraud' }, 'acme-{namespace}', 'europe-west4')).toBe(
      'projects/acme-risk/locations/europe-west4/endpoints/fraud',
    );
  });

  it('refuses a template that could give two namespaces the same name', () => {
    expect(projectTemplateProblem('{namespace}')).toBeUndefined();
    expect(projectTemplateProblem('prod-{namespace}-ml')).toBeUndefined();
    expect(projectTemplateProblem('endpoint-operator')).toContain('must contain {namespace}');
    expect(projectTemplateProblem('a/{namespace}')).toContain('only lowercase letters, digits and dashes');
  });

  it('builds the URL to call from the gateway base URL', () => {
    expect(endpointUrl('http://127.0.0.1:8090', 'projects/p/locations/l/endpoints/e')).toBe(
      'http://127.0.0.1:8090/v1/projects/p/locations/l/endpoints/e',
    );
    expect(endpointUrl('https://gw.example.com/prefix//', 'projects/p/locations/l/endpoints/e')).toBe(
      'https://gw.example.com/prefix/v1/projects/p/locations/l/endpoints/e',
    );
    expect(gatewayUrlProblem('http://endpoint-operator-gateway.endpoint-operator-system.svc')).toBeUndefined();
    for (const bad of ['gateway:8080', 'ftp://gw', 'http://gw/?x=1']) expect(gatewayUrlProblem(bad), bad).toBeDefined();
  });
});
