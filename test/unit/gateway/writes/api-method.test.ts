import { describe, expect, it } from 'vitest';
import { compileRule, restRequest } from '../../../../src/gateway/writes/api-method.js';

describe("REST requests from Google's http rules", () => {
  it('captures path fields, nested ones included', () => {
    const rule = compileRule({
      method: 'PATCH',
      path: '/v1/{model.name=projects/*/locations/*/models/*}',
      body: 'model',
    });
    const m = rule.pattern.exec('/v1/projects/p/locations/l/models/iris');
    expect(m?.slice(1)).toEqual(['projects/p/locations/l/models/iris']);
    expect(restRequest(rule, m?.slice(1) ?? [], { displayName: 'x' }, { updateMask: 'displayName' })).toEqual({
      model: { displayName: 'x', name: 'projects/p/locations/l/models/iris' },
      updateMask: 'displayName',
    });
  });

  it('keeps a custom verb apart from the last segment', () => {
    const get = compileRule({ method: 'GET', path: '/v1/{name=projects/*/locations/*/models/*}' });
    const list = compileRule({ method: 'GET', path: '/v1/{name=projects/*/locations/*/models/*}:listVersions' });
    expect(get.pattern.test('/v1/projects/p/locations/l/models/iris:listVersions')).toBe(false);
    expect(list.pattern.exec('/v1/projects/p/locations/l/models/iris:listVersions')?.[1]).toBe(
      'projects/p/locations/l/models/iris',
    );
    expect(get.pattern.exec('/v1/projects/p/locations/l/models/iris@2')?.[1]).toBe(
      'projects/p/locations/l/models/iris@2',
    );
  });

  it("takes the whole body with body '*', and no system parameter as a field", () => {
    const rule = compileRule({ method: 'POST', path: '/v1/{parent=projects/*/locations/*}/models:upload', body: '*' });
    const m = rule.pattern.exec('/v1/projects/p/locations/l/models:upload');
    expect(restRequest(rule, m?.slice(1) ?? [], { parent: 'ignored', modelId: 'iris' }, { alt: 'json' })).toEqual({
      parent: 'projects/p/locations/l',
      modelId: 'iris',
    });
    const list = compileRule({ method: 'GET', path: '/v1/{parent=projects/*/locations/*}/models' });
    expect(
      restRequest(list, ['projects/p/locations/l'], undefined, { pageSize: '2', $alt: 'json', filter: 'x' }),
    ).toEqual({
      parent: 'projects/p/locations/l',
      pageSize: '2',
      filter: 'x',
    });
  });
});
