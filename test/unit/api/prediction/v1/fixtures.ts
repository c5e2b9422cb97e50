import { defaultValidationOptions } from '../../../../../src/api/common/kind.js';
import type { FieldError, ValidationResult } from '../../../../../src/api/common/field-error.js';
import { validateDeployedModel } from '../../../../../src/api/prediction/v1/deployed-model-validation.js';
import { validatePredictionEndpoint } from '../../../../../src/api/prediction/v1/endpoint-validation.js';

type Json = Record<string, unknown>;

/** A valid PredictionEndpoint whose spec fields are replaced by `spec` (undefined removes a field). */
export function endpoint(spec: Json = {}, status?: Json): Json {
  const merged: Json = { displayName: 'Churn prediction', ...spec };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'PredictionEndpoint',
    metadata: { name: 'churn', namespace: 'endpoint-demo' },
    spec: merged,
    ...(status === undefined ? {} : { status }),
  };
}

export const dedicated = { machineSpec: { machineType: 'n1-standard-4' }, minReplicaCount: 1 };

/** A valid DeployedModel whose spec fields are replaced by `spec` (undefined removes a field). */
export function deployedModel(spec: Json = {}, status?: Json): Json {
  const merged: Json = {
    endpointRef: { name: 'churn' },
    model: 'projects/demo/locations/us-central1/models/churn-xgb',
    dedicatedResources: dedicated,
    ...spec,
  };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  return {
    apiVersion: 'prediction.endpoint-operator.dev/v1',
    kind: 'DeployedModel',
    metadata: { name: 'churn-xgb', namespace: 'endpoint-demo' },
    spec: merged,
    ...(status === undefined ? {} : { status }),
  };
}

export function validateEndpoint(obj: unknown, old?: unknown): ValidationResult {
  return validatePredictionEndpoint(obj, old, defaultValidationOptions);
}

export function validateModel(obj: unknown, old?: unknown): ValidationResult {
  return validateDeployedModel(obj, old, defaultValidationOptions);
}

/** The field paths of the errors, which is what a user reads first. */
export function fields(result: ValidationResult): string[] {
  return result.errors.map((e: FieldError) => e.field);
}
