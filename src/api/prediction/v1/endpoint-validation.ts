import { codePointLength, isRecord, keyInPath } from '../../common/text.js';
import { withoutUnset } from '../../common/unset.js';
import { fieldErrors, type FieldError, type ValidationResult } from '../../common/field-error.js';
import { FieldPath } from '../../common/field-path.js';
import type { ValidationOptions } from '../../common/kind.js';
import { decodeFields } from './decode-fields.js';
import { jsonEqual } from './etag.js';
import {
  DISPLAY_NAME_MAX_CODE_POINTS,
  predictionEndpointSpecSchema,
  type PredictionEndpointSpec,
} from './endpoint-schema.js';
import {
  DEPLOYED_MODEL_ID,
  LABEL_KEY,
  LABEL_MAX_CODE_POINTS,
  LABEL_VALUE,
  MAX_LABELS,
  bigQueryUriProblem,
} from './names.js';

const spec = FieldPath.root('spec');

/**
 * Every rule of a PredictionEndpoint (the README's PredictionEndpoint rules; where they are silent, Vertex AI's
 * Endpoint). `oldObj` is the stored object on UPDATE, anything else on CREATE. Pure; never throws.
 */
export function validatePredictionEndpoint(
  obj: unknown,
  oldObj: unknown,
  _options: ValidationOptions,
): ValidationResult {
  if (!isRecord(obj))
    return { errors: [fieldErrors.typeInvalid('', obj, 'a PredictionEndpoint must be an object')], warnings: [] };
  // null and "" in optional fields mean unset (common/unset.ts), on both sides of an update.
  const raw = withoutUnset(predictionEndpointSpecSchema, obj.spec);
  const decoded = decodeFields(predictionEndpointSpecSchema, raw, ['spec'], ['labels', 'trafficSplit']);
  const errors = [...decoded.errors];
  const warnings: string[] = [];
  if (isRecord(raw)) {
    errors.push(...displayNameErrors(decoded.value));
    errors.push(...labelErrors(raw.labels));
    errors.push(...trafficSplitErrors(raw.trafficSplit));
    errors.push(...networkErrors(raw, warnings));
    errors.push(...loggingErrors(decoded.value));
    const oldSpec = isRecord(oldObj) ? withoutUnset(predictionEndpointSpecSchema, oldObj.spec) : undefined;
    errors.push(...etagErrors(raw, isRecord(oldObj) ? { ...oldObj, spec: oldSpec } : oldObj));
  }
  return { errors, warnings };
}

function displayNameErrors(value: Partial<PredictionEndpointSpec>): FieldError[] {
  const name = value.displayName;
  const path = spec.child('displayName').toString();
  if (name === undefined) return [];
  if (name === '') return [fieldErrors.required(path, 'spec.displayName is required and may not be empty')];
  if (codePointLength(name) > DISPLAY_NAME_MAX_CODE_POINTS)
    return [fieldErrors.tooLong(path, name, DISPLAY_NAME_MAX_CODE_POINTS)];
  return [];
}

/** spec.labels, checked on the raw map so that a bad key and a bad value are both reported. */
export function labelErrors(labels: unknown): FieldError[] {
  const path = spec.child('labels');
  if (labels === undefined || labels === null) return [];
  if (!isRecord(labels))
    return [fieldErrors.typeInvalid(path.toString(), labels, 'must be a map of string keys to string values')];
  const errors: FieldError[] = [];
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) {
    errors.push({
      field: path.toString(),
      type: 'FieldValueTooMany',
      value: entries.length,
      detail: `must have at most ${MAX_LABELS} labels`,
    });
  }
  for (const [key, value] of entries) {
    const at = path.key(keyInPath(key)).toString();
    if (key === '') errors.push(fieldErrors.invalid(at, key, 'label keys may not be empty'));
    else if (codePointLength(key) > LABEL_MAX_CODE_POINTS)
      errors.push(fieldErrors.tooLong(at, key, LABEL_MAX_CODE_POINTS, 'code points'));
    else if (!LABEL_KEY.test(key)) {
      errors.push(
        fieldErrors.invalid(
          at,
          key,
          'label keys must start with a lowercase letter (international allowed) and contain only lowercase letters, numeric characters, underscores and dashes',
        ),
      );
    }
    if (typeof value !== 'string') errors.push(fieldErrors.typeInvalid(at, value, 'label values must be strings'));
    else if (codePointLength(value) > LABEL_MAX_CODE_POINTS)
      errors.push(fieldErrors.tooLong(at, value, LABEL_MAX_CODE_POINTS, 'code points'));
    else if (!LABEL_VALUE.test(value)) {
      errors.push(
        fieldErrors.invalid(
          at,
          value,
          'label values may contain only lowercase letters (international allowed), numeric characters, underscores and dashes',
        ),
      );
    }
  }
  return errors;
}

/** spec.trafficSplit: deployed-model id → percentage; the percentages sum to 100 or the map is empty. */
export function trafficSplitErrors(split: unknown): FieldError[] {
  const path = spec.child('trafficSplit');
  if (split === undefined || split === null) return [];
  if (!isRecord(split))
    return [
      fieldErrors.typeInvalid(path.toString(), split, 'must be a map of deployed-model id to integer percentage'),
    ];
  const errors: FieldError[] = [];
  let sum = 0;
  let allValid = true;
  for (const [key, value] of Object.entries(split)) {
    const at = path.key(keyInPath(key)).toString();
    if (!DEPLOYED_MODEL_ID.test(key))
      errors.push(fieldErrors.invalid(at, key, 'keys must be deployed-model ids: 1 to 10 digits'));
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      errors.push(fieldErrors.typeInvalid(at, value, 'must be an integer percentage from 0 to 100'));
      allValid = false;
    } else if (value < 0 || value > 100) {
      errors.push(fieldErrors.invalid(at, value, 'must be an integer percentage from 0 to 100'));
      allValid = false;
    } else {
      sum += value;
    }
  }
  if (allValid && Object.keys(split).length > 0 && sum !== 100) {
    errors.push(
      fieldErrors.invalid(
        path.toString(),
        split,
        `percentages must sum to exactly 100 (they sum to ${sum}); leave the map empty for an endpoint that accepts no traffic`,
      ),
    );
  }
  return errors;
}

function networkErrors(raw: Record<string, unknown>, warnings: string[]): FieldError[] {
  const psc = raw.enablePrivateServiceConnect;
  if (psc === undefined || psc === null) return [];
  warnings.push(
    'spec.enablePrivateServiceConnect is deprecated: use spec.network to connect the endpoint to a VPC network',
  );
  if (psc === true && raw.network !== undefined) {
    return [
      fieldErrors.forbidden(
        spec.child('enablePrivateServiceConnect').toString(),
        'may not be true when spec.network is set: the two are mutually exclusive; remove spec.enablePrivateServiceConnect (deprecated) and keep spec.network',
      ),
    ];
  }
  return [];
}

function loggingErrors(value: Partial<PredictionEndpointSpec>): FieldError[] {
  const uri = value.predictRequestResponseLoggingConfig?.bigqueryDestination?.outputUri;
  if (uri === undefined) return [];
  const problem = bigQueryUriProblem(uri);
  const path = spec
    .child('predictRequestResponseLoggingConfig')
    .child('bigqueryDestination')
    .child('outputUri')
    .toString();
  return problem === undefined ? [] : [fieldErrors.invalid(path, uri, problem)];
}

/**
 * Optimistic concurrency: a spec.etag on UPDATE must equal the stored object's status.etag. Only a
 * change of the spec is held to it: metadata-only updates (the operator adding a finalizer, a
 * label by hand) keep the etag the user last applied, which is stale by then, and must still pass.
 */
function etagErrors(newSpec: Record<string, unknown>, oldObj: unknown): FieldError[] {
  const etag = newSpec.etag;
  if (typeof etag !== 'string' || etag === '' || !isRecord(oldObj)) return [];
  if (!specChanged(oldObj.spec, newSpec)) return [];
  const current = isRecord(oldObj.status) && typeof oldObj.status.etag === 'string' ? oldObj.status.etag : undefined;
  if (etag === current) return [];
  const why =
    current === undefined
      ? 'the stored object has no status.etag yet (the operator has not reconciled it)'
      : `the stored object's status.etag is ${JSON.stringify(current)}`;
  return [
    fieldErrors.invalid(
      spec.child('etag').toString(),
      etag,
      `does not match: ${why}, so the object changed since you read it; re-read it (kubectl get), re-apply your change with the new status.etag in spec.etag, or remove spec.etag to overwrite blindly`,
    ),
  ];
}

/** Whether two specs differ other than in `etag`, independent of key order. */
function specChanged(oldSpec: unknown, newSpec: Record<string, unknown>): boolean {
  if (!isRecord(oldSpec)) return true;
  const { etag: _old, ...oldRest } = oldSpec;
  const { etag: _new, ...newRest } = newSpec;
  return !jsonEqual(oldRest, newRest);
}
