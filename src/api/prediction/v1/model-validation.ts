/**
 * Every rule of a Model (model-schema.ts says the same in CEL where a single object can be judged).
 * `oldObj` is the stored object on UPDATE: a version present on both sides must be unchanged, and a version
 * the old object's status.deployedModels lists as served may not be removed (the ValidatingAdmissionPolicy of
 * model-policy.ts refuses the same when the webhook is down). Pure; never throws.
 */
import { codePointLength, isRecord } from '../../common/text.js';
import { withoutUnset } from '../../common/unset.js';
import { fieldErrors, type FieldError, type ValidationResult } from '../../common/field-error.js';
import { FieldPath } from '../../common/field-path.js';
import type { ValidationOptions } from '../../common/kind.js';
import { decodeFields } from './decode-fields.js';
import { DISPLAY_NAME_MAX_CODE_POINTS } from './endpoint-schema.js';
import { labelErrors } from './endpoint-validation.js';
import { canonicalJson } from './etag.js';
import { DEFAULT_ALIAS, modelSpecSchema, type ModelSpec } from './model-schema.js';
import { containerSpecErrors } from './serving-validation.js';

const spec = FieldPath.root('spec');

export function validateModel(obj: unknown, oldObj: unknown, _options: ValidationOptions): ValidationResult {
  if (!isRecord(obj)) return { errors: [fieldErrors.typeInvalid('', obj, 'a Model must be an object')], warnings: [] };
  const raw = withoutUnset(modelSpecSchema, obj.spec);
  const decoded = decodeFields(modelSpecSchema, raw, ['spec'], ['labels']);
  const errors = [...decoded.errors];
  if (isRecord(raw)) {
    errors.push(...displayNameErrors(decoded.value));
    errors.push(...labelErrors(raw.labels));
    errors.push(...versionErrors(decoded.value));
    errors.push(...aliasErrors(decoded.value));
    if (isRecord(oldObj)) errors.push(...transitionErrors(raw, oldObj));
  }
  return { errors, warnings: [] };
}

function displayNameErrors(value: Partial<ModelSpec>): FieldError[] {
  const name = value.displayName;
  const path = spec.child('displayName').toString();
  if (name === undefined) return [];
  if (name === '') return [fieldErrors.required(path, 'spec.displayName is required and may not be empty')];
  if (codePointLength(name) > DISPLAY_NAME_MAX_CODE_POINTS)
    return [fieldErrors.tooLong(path, name, DISPLAY_NAME_MAX_CODE_POINTS, 'code points')];
  return [];
}

function versionErrors(value: Partial<ModelSpec>): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (value.versions ?? []).forEach((v, i) => {
    const path = spec.child('versions').index(i);
    if (seen.has(v.id)) errors.push(fieldErrors.duplicate(path.child('id').toString(), v.id));
    seen.add(v.id);
    errors.push(...containerSpecErrors(v.containerSpec, path.child('containerSpec')));
  });
  return errors;
}

function aliasErrors(value: Partial<ModelSpec>): FieldError[] {
  const aliases = value.versionAliases;
  if (aliases === undefined) return [];
  const errors: FieldError[] = [];
  const path = spec.child('versionAliases');
  const versionIds = new Set((value.versions ?? []).map((v) => v.id));
  const seen = new Set<string>();
  aliases.forEach((a, i) => {
    if (seen.has(a.alias)) errors.push(fieldErrors.duplicate(path.index(i).child('alias').toString(), a.alias));
    seen.add(a.alias);
    // Reported at the list, where the CRD's rule (which sees every alias and version) reports it too.
    if (value.versions !== undefined && !versionIds.has(a.versionId))
      errors.push(
        fieldErrors.notFound(
          path.toString(),
          a.versionId,
          `every alias must name a version of spec.versions: alias "${a.alias}" (spec.versionAliases[${i}]) names version "${a.versionId}", which spec.versions lacks (it has ${[...versionIds].map((id) => JSON.stringify(id)).join(', ') || 'none'})`,
        ),
      );
  });
  if (!seen.has(DEFAULT_ALIAS))
    errors.push(
      fieldErrors.required(
        path.toString(),
        `must include the alias "${DEFAULT_ALIAS}": it names the version a DeployedModel without @version deploys`,
      ),
    );
  return errors;
}

/** The versions of a raw spec by id, with their index in the list. */
function versionsById(rawSpec: unknown): Map<string, { index: number; version: unknown }> {
  const byId = new Map<string, { index: number; version: unknown }>();
  const list = isRecord(rawSpec) && Array.isArray(rawSpec.versions) ? (rawSpec.versions as unknown[]) : [];
  list.forEach((version, index) => {
    if (isRecord(version) && typeof version.id === 'string' && !byId.has(version.id))
      byId.set(version.id, { index, version });
  });
  return byId;
}

/** The version ids a Model's status lists as served, with who serves them. */
export function servedVersions(status: unknown): Map<string, string[]> {
  const served = new Map<string, string[]>();
  const list = isRecord(status) && Array.isArray(status.deployedModels) ? (status.deployedModels as unknown[]) : [];
  for (const d of list) {
    if (!isRecord(d) || typeof d.versionId !== 'string' || typeof d.deployedModel !== 'string') continue;
    served.set(d.versionId, [...(served.get(d.versionId) ?? []), d.deployedModel]);
  }
  return served;
}

function transitionErrors(raw: Record<string, unknown>, oldObj: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const next = versionsById(raw);
  const prev = versionsById(withoutUnset(modelSpecSchema, oldObj.spec));
  for (const [id, { index, version }] of next) {
    const before = prev.get(id);
    if (before === undefined || canonicalJson(before.version) === canonicalJson(version)) continue;
    errors.push(
      fieldErrors.invalid(
        spec.child('versions').index(index).toString(),
        `<version ${id}>`,
        `version "${id}" changed: a version's content never changes once created (Vertex: model versions are immutable); upload a new version with a new id and move the alias to it`,
      ),
    );
  }
  for (const [id, users] of servedVersions(oldObj.status)) {
    if (next.has(id) || !prev.has(id)) continue;
    errors.push(
      fieldErrors.forbidden(
        spec.child('versions').toString(),
        `version "${id}" may not be removed while DeployedModel ${users.map((u) => JSON.stringify(u)).join(', ')} serves it (status.deployedModels; Vertex answers FAILED_PRECONDITION): undeploy it first`,
      ),
    );
  }
  return errors;
}
