import { describe, expect, it } from 'vitest';
import {
  badRequestOf,
  requestField,
  snakeCase,
  violationsOfStatus,
} from '../../../../src/gateway/writes/field-table.js';

const table = {
  'metadata.name': 'model_id',
  'spec.displayName': 'model.display_name',
  'spec.versions[*]': 'model',
  'spec.versions[*].containerSpec': 'model.container_spec',
};

describe('field tables', () => {
  it('maps the longest matching object prefix, the rest in snake_case', () => {
    expect(requestField(table, 'spec.versions[0].containerSpec.healthRoute')).toBe('model.container_spec.health_route');
    expect(requestField(table, '.spec.versions[3].artifactUri')).toBe('model.artifact_uri');
    expect(requestField(table, 'spec.displayName')).toBe('model.display_name');
    expect(requestField(table, 'metadata.name')).toBe('model_id');
    expect(requestField(table, 'spec.displayNameX')).toBe('spec.display_name_x');
    expect(snakeCase('spec.versionAliases[1].versionId')).toBe('spec.version_aliases[1].version_id');
  });

  it("turns the apiserver's 422 causes into the request's field violations", () => {
    const status = {
      kind: 'Status',
      reason: 'Invalid',
      code: 422,
      details: {
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: "x": must be https',
            field: 'spec.versions[0].containerSpec.imageUri',
          },
        ],
      },
    };
    expect(violationsOfStatus(table, status)).toEqual([
      { field: 'model.container_spec.image_uri', description: 'Invalid value: "x": must be https' },
    ]);
  });

  it("turns the validators' field errors into a BadRequest", () => {
    const err = badRequestOf(table, [
      { field: 'metadata.name', type: 'FieldValueInvalid', value: 'Bad', detail: 'must be a model id' },
    ]);
    expect(err?.status).toBe('INVALID_ARGUMENT');
    expect(err?.fieldViolations).toEqual([
      { field: 'model_id', description: 'invalid value "Bad": must be a model id' },
    ]);
    expect(err?.body().error.details?.[0]?.['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
    expect(badRequestOf(table, [])).toBeUndefined();
  });
});
