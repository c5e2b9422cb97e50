import { fieldErrors, type FieldError } from './common/field-error.js';
import type { ValidationOptions } from './common/kind.js';
import { malformedTextErrors } from './common/malformed-text.js';
import { validateObjectMeta } from './common/object-meta.js';
import { isRecord } from './common/text.js';
import { unknownFieldFindings } from './common/unknown-fields.js';
import { allKinds, findKind } from './kinds.js';

/** The verdict on one manifest: `skipped` when it is not one of the operator's kinds. */
export interface ObjectVerdict {
  readonly outcome: 'valid' | 'invalid' | 'skipped';
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly errors: FieldError[];
  readonly warnings: string[];
}

const ownGroups = new Set(allKinds.map((k) => k.group));

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export interface ObjectValidationOptions extends ValidationOptions {
  /**
   * Refuse fields the version does not have (kubeconform's -strict) instead of warning about them.
   * Either way they are reported: the apiserver would drop them without a word.
   */
  readonly strict?: boolean;
}

/**
 * Validates one object offline exactly as the admission webhook and the reconciler would, plus
 * what only an offline check can see: the metadata checks the apiserver itself makes, text that is
 * not Unicode (the apiserver would replace it) and fields the version does not have (the apiserver
 * would drop them). Never throws.
 */
export function validateObject(obj: unknown, oldObj: unknown, options: ObjectValidationOptions): ObjectVerdict {
  if (!isRecord(obj)) {
    return {
      outcome: 'invalid',
      errors: [
        fieldErrors.typeInvalid('', obj, 'a manifest must be a YAML/JSON object with apiVersion, kind and metadata'),
      ],
      warnings: [],
    };
  }
  const apiVersion = str(obj.apiVersion);
  const kind = str(obj.kind);
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  const identity = {
    ...(apiVersion === undefined ? {} : { apiVersion }),
    ...(kind === undefined ? {} : { kind }),
    ...(str(meta.namespace) === undefined ? {} : { namespace: str(meta.namespace) }),
    ...(str(meta.name) === undefined ? {} : { name: str(meta.name) }),
  };
  const missing: FieldError[] = [];
  if (apiVersion === undefined)
    missing.push(
      fieldErrors.required('apiVersion', 'apiVersion is required (for example prediction.endpoint-operator.dev/v1)'),
    );
  if (kind === undefined) missing.push(fieldErrors.required('kind', 'kind is required'));
  if (apiVersion === undefined || kind === undefined)
    return { outcome: 'invalid', ...identity, errors: missing, warnings: [] };

  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (!ownGroups.has(group)) return { outcome: 'skipped', ...identity, errors: [], warnings: [] };

  const found = findKind(apiVersion, kind);
  if (!found) {
    const sameKind = allKinds.find((k) => k.group === group && k.kind === kind);
    const error = sameKind
      ? fieldErrors.notSupported(
          'apiVersion',
          apiVersion,
          sameKind.versions.filter((v) => v.served).map((v) => `${group}/${v.name}`),
        )
      : fieldErrors.notSupported(
          'kind',
          kind,
          allKinds.filter((k) => k.group === group).map((k) => k.kind),
        );
    return { outcome: 'invalid', ...identity, errors: [error], warnings: [] };
  }
  let result;
  try {
    result = found.version.validate(obj, oldObj, options);
  } catch (err) {
    // Validators promise never to throw; if one does, report it as a finding rather than crash a pipeline.
    result = { errors: [fieldErrors.internal('', `validator failed: ${(err as Error).message}`)], warnings: [] };
  }
  const unknown = unknownFieldFindings(found.def, found.version, obj);
  const errors = [
    ...validateObjectMeta(obj),
    ...malformedTextErrors(obj, found.version.spec),
    ...result.errors,
    ...(options.strict ? unknown : []),
  ];
  const warnings = [...result.warnings, ...(options.strict ? [] : unknown.map((e) => `${e.field}: ${e.detail}`))];
  return { outcome: errors.length === 0 ? 'valid' : 'invalid', ...identity, errors, warnings };
}
