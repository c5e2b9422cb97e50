import { fieldErrors, type FieldError } from './field-error.js';
import { isRecord } from './text.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/**
 * The checks the apiserver applies to `metadata` of a namespaced custom resource
 * (ValidateObjectMeta with NameIsDNSSubdomain), for offline validation where no apiserver runs.
 */
export function validateObjectMeta(obj: Record<string, unknown>): FieldError[] {
  const meta = obj.metadata;
  if (meta === undefined) return [fieldErrors.required('metadata.name', 'name or generateName is required')];
  if (!isRecord(meta)) return [fieldErrors.typeInvalid('metadata', meta, 'must be an object')];
  const errors: FieldError[] = [];
  const { name, generateName, namespace } = meta;
  if (name === undefined || name === '') {
    if (generateName === undefined || generateName === '')
      errors.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  } else if (typeof name !== 'string') {
    errors.push(fieldErrors.typeInvalid('metadata.name', name, 'must be a string'));
  } else if (!isDns1123Subdomain(name)) {
    errors.push(
      fieldErrors.invalid(
        'metadata.name',
        name,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (at most 253 characters)",
      ),
    );
  }
  if (namespace !== undefined) {
    if (typeof namespace !== 'string')
      errors.push(fieldErrors.typeInvalid('metadata.namespace', namespace, 'must be a string'));
    else if (!isDns1123Label(namespace))
      errors.push(
        fieldErrors.invalid(
          'metadata.namespace',
          namespace,
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (at most 63 characters)",
        ),
      );
  }
  for (const mapField of ['labels', 'annotations'] as const) {
    const m = meta[mapField];
    if (m === undefined) continue;
    if (!isRecord(m)) {
      errors.push(fieldErrors.typeInvalid(`metadata.${mapField}`, m, 'must be a map of string keys to string values'));
      continue;
    }
    for (const [k, v] of Object.entries(m)) {
      if (typeof v !== 'string')
        errors.push(fieldErrors.typeInvalid(`metadata.${mapField}[${k}]`, v, 'must be a string'));
    }
  }
  return errors;
}
