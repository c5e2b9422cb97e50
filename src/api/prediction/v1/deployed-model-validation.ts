import { codePointLength, isRecord } from '../../common/text.js';
import { withoutUnset } from '../../common/unset.js';
import { fieldErrors, type FieldError, type ValidationResult } from '../../common/field-error.js';
import { FieldPath } from '../../common/field-path.js';
import type { ValidationOptions } from '../../common/kind.js';
import { backendErrors } from './backend-validation.js';
import { decodeFields } from './decode-fields.js';
import { servingErrors, servingImmutabilityErrors } from './serving-validation.js';
import {
  DEPLOYED_MODEL_DISPLAY_NAME_MAX_CODE_POINTS,
  deployedModelSpecSchema,
  type DeployedModelSpec,
} from './deployed-model-schema.js';

const spec = FieldPath.root('spec');

/**
 * Every rule of a DeployedModel (the README's DeployedModel rules; where they are silent, Vertex AI's
 * DeployedModel). `oldObj` is the stored object on UPDATE, anything else on CREATE. Pure; never throws.
 */
export function validateDeployedModel(obj: unknown, oldObj: unknown, _options: ValidationOptions): ValidationResult {
  if (!isRecord(obj))
    return { errors: [fieldErrors.typeInvalid('', obj, 'a DeployedModel must be an object')], warnings: [] };
  // null and "" in optional fields mean unset (common/unset.ts), on both sides of an update.
  const raw = withoutUnset(deployedModelSpecSchema, obj.spec);
  const decoded = decodeFields(deployedModelSpecSchema, raw, ['spec']);
  const errors = [...decoded.errors];
  if (isRecord(raw)) {
    errors.push(...displayNameErrors(decoded.value));
    errors.push(...resourcesErrors(raw, decoded.value));
    errors.push(...backendErrors(raw.backend, decoded.value.backend));
    errors.push(...servingErrors(raw, decoded.value));
    if (isRecord(oldObj)) {
      const old = { ...oldObj, spec: withoutUnset(deployedModelSpecSchema, oldObj.spec) };
      errors.push(...immutabilityErrors(raw, old));
      if (isRecord(old.spec)) errors.push(...servingImmutabilityErrors(raw, old.spec));
    }
  }
  return { errors, warnings: [] };
}

function displayNameErrors(value: Partial<DeployedModelSpec>): FieldError[] {
  const name = value.displayName;
  if (name === undefined || codePointLength(name) <= DEPLOYED_MODEL_DISPLAY_NAME_MAX_CODE_POINTS) return [];
  return [fieldErrors.tooLong(spec.child('displayName').toString(), name, DEPLOYED_MODEL_DISPLAY_NAME_MAX_CODE_POINTS)];
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Exactly one of dedicatedResources / automaticResources, with replica counts that make sense. */
function resourcesErrors(raw: Record<string, unknown>, value: Partial<DeployedModelSpec>): FieldError[] {
  const hasDedicated = present(raw.dedicatedResources);
  const hasAutomatic = present(raw.automaticResources);
  if (!hasDedicated && !hasAutomatic) {
    return [
      fieldErrors.required(
        spec.toString(),
        'exactly one of spec.dedicatedResources and spec.automaticResources is required',
      ),
    ];
  }
  if (hasDedicated && hasAutomatic) {
    return [
      fieldErrors.forbidden(
        spec.child('automaticResources').toString(),
        'may not be set together with spec.dedicatedResources: set exactly one of the two',
      ),
    ];
  }
  const errors: FieldError[] = [];
  const dedicated = value.dedicatedResources;
  if (dedicated) {
    const path = spec.child('dedicatedResources');
    const { minReplicaCount: min, maxReplicaCount: max } = dedicated;
    if (max !== undefined && max < min)
      errors.push(
        fieldErrors.invalid(path.child('maxReplicaCount').toString(), max, `must be at least minReplicaCount (${min})`),
      );
    const { acceleratorType, acceleratorCount } = dedicated.machineSpec;
    if (acceleratorCount !== undefined && acceleratorCount > 0 && acceleratorType === undefined) {
      errors.push(
        fieldErrors.required(
          path.child('machineSpec').child('acceleratorType').toString(),
          'is required when acceleratorCount is above 0',
        ),
      );
    }
    const seen = new Set<string>();
    (dedicated.autoscalingMetricSpecs ?? []).forEach((m, i) => {
      if (seen.has(m.metricName))
        errors.push(
          fieldErrors.duplicate(
            path.child('autoscalingMetricSpecs').index(i).child('metricName').toString(),
            m.metricName,
          ),
        );
      seen.add(m.metricName);
    });
  }
  const automatic = value.automaticResources;
  if (
    automatic?.minReplicaCount !== undefined &&
    automatic.maxReplicaCount !== undefined &&
    automatic.maxReplicaCount < automatic.minReplicaCount
  ) {
    errors.push(
      fieldErrors.invalid(
        spec.child('automaticResources').child('maxReplicaCount').toString(),
        automatic.maxReplicaCount,
        `must be at least minReplicaCount (${automatic.minReplicaCount})`,
      ),
    );
  }
  return errors;
}

/**
 * spec.id and spec.endpointRef.name never change. The CEL rule `self == oldSelf` covers a change
 * of a value present on both sides; adding or removing one is caught here. Adding spec.id is
 * allowed only with the id the operator assigned and reported in status.id (writing it down).
 */
function immutabilityErrors(raw: Record<string, unknown>, oldObj: Record<string, unknown>): FieldError[] {
  const oldSpec = oldObj.spec;
  if (!isRecord(oldSpec)) return [];
  const errors: FieldError[] = [];
  const idPath = spec.child('id').toString();
  const oldId = typeof oldSpec.id === 'string' ? oldSpec.id : undefined;
  const newId = present(raw.id) ? raw.id : undefined;
  if (oldId !== undefined && newId === undefined) {
    errors.push(fieldErrors.forbidden(idPath, `is immutable and may not be removed (it is ${JSON.stringify(oldId)})`));
  } else if (oldId !== undefined && newId !== oldId) {
    errors.push(
      fieldErrors.invalid(
        idPath,
        newId,
        `is immutable (it is ${JSON.stringify(oldId)}); to use another id, delete this DeployedModel and create a new one`,
      ),
    );
  } else if (oldId === undefined && newId !== undefined) {
    const assigned = isRecord(oldObj.status) && typeof oldObj.status.id === 'string' ? oldObj.status.id : undefined;
    if (newId !== assigned) {
      const detail =
        assigned === undefined
          ? 'is immutable and may not be added after creation'
          : `is immutable: it may only be set to the id the operator assigned, ${JSON.stringify(assigned)} (status.id)`;
      errors.push(fieldErrors.invalid(idPath, newId, detail));
    }
  }
  const oldEndpoint = isRecord(oldSpec.endpointRef) ? oldSpec.endpointRef.name : undefined;
  const newEndpoint = isRecord(raw.endpointRef) ? raw.endpointRef.name : undefined;
  if (typeof oldEndpoint === 'string' && typeof newEndpoint === 'string' && oldEndpoint !== newEndpoint) {
    errors.push(
      fieldErrors.invalid(
        spec.child('endpointRef').child('name').toString(),
        newEndpoint,
        `is immutable (it is ${JSON.stringify(oldEndpoint)}); to move a model, delete this DeployedModel (undeploy) and create one for the other endpoint (deploy)`,
      ),
    );
  }
  return errors;
}
