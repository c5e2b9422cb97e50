import { fieldErrors, type FieldError } from '../../common/field-error.js';
import { FieldPath } from '../../common/field-path.js';
import { isRecord } from '../../common/text.js';
import type { DeployedModelBackend } from './backend.js';

const backendPath = FieldPath.root('spec').child('backend');

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/**
 * The rules of `spec.backend` that its schema cannot carry (types, lengths and patterns are decoded
 * by the schema). `raw` is the field as written, `decoded` what of it passed the schema. Pure.
 */
export function backendErrors(raw: unknown, decoded: DeployedModelBackend | undefined): FieldError[] {
  if (!isRecord(raw)) return [];
  const hasService = present(raw.service);
  const hasUrl = present(raw.url);
  if (!hasService && !hasUrl) {
    return [
      fieldErrors.required(
        backendPath.toString(),
        'exactly one of spec.backend.service (a Service in this namespace) and spec.backend.url (a server outside the cluster) is required',
      ),
    ];
  }
  if (hasService && hasUrl) {
    return [
      fieldErrors.forbidden(
        backendPath.child('url').toString(),
        'may not be set together with spec.backend.service: set exactly one of the two',
      ),
    ];
  }
  const errors: FieldError[] = [];
  const port = decoded?.service?.port;
  // Kubernetes port names hold at least one letter (IsValidPortName), so "8080" can only be a number
  // written as a string: YAML quoting it is a common slip that would otherwise never match a port.
  if (typeof port === 'string' && !/[a-z]/.test(port)) {
    errors.push(
      fieldErrors.invalid(
        backendPath.child('service').child('port').toString(),
        port,
        `a port name must contain a letter; for the port number write it unquoted (port: ${port})`,
      ),
    );
  } else if (typeof port === 'string' && port.includes('--')) {
    errors.push(
      fieldErrors.invalid(
        backendPath.child('service').child('port').toString(),
        port,
        'a port name must not contain two consecutive dashes (an IANA service name)',
      ),
    );
  }
  const url = decoded?.url;
  if (url !== undefined) errors.push(...urlErrors(url));
  return errors;
}

function urlErrors(url: string): FieldError[] {
  const path = backendPath.child('url').toString();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [fieldErrors.invalid(path, url, 'must be a URL that parses (scheme, host and optional port and path)')];
  }
  // Credentials in a spec are readable by everyone who can read the object, and end up in logs.
  if (parsed.username !== '' || parsed.password !== '') {
    return [
      fieldErrors.invalid(
        path,
        '<redacted>',
        'must not contain credentials (user:password@): the model server must authenticate the gateway another way',
      ),
    ];
  }
  return [];
}
