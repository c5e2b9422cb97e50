/**
 * The object a prediction call names, read from its path alone (before any look-up, so a refusal
 * cannot depend on whether the object exists): `projects/{project}/locations/{l}/endpoints/{name}`
 * where the project is the operator's `--project` template with the namespace in it
 * (src/api/prediction/v1/names.ts).
 */
import { NAMESPACE_PLACEHOLDER } from '../../api/prediction/v1/names.js';
import type { CallTarget } from './attributes.js';

const DNS1123_LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Reads `{namespace}` back out of a project; undefined when the project does not fit the template. */
export function namespaceReader(projectTemplate: string): (project: string) => string | undefined {
  const parts = projectTemplate.split(NAMESPACE_PLACEHOLDER);
  if (parts.length === 2 && parts[0] === '' && parts[1] === '') {
    const label = new RegExp(`^${DNS1123_LABEL}$`); // built once: this reader runs on every prediction call
    return (project) => (label.test(project) ? project : undefined);
  }
  const pattern = new RegExp(`^${parts.map(escape).join(`(${DNS1123_LABEL})`)}$`);
  return (project) => {
    const m = pattern.exec(project);
    if (m === null) return undefined;
    const first = m[1];
    return m.slice(1).every((x) => x === first) ? first : undefined;
  };
}

export function predictionTarget(
  readNamespace: (project: string) => string | undefined,
  project: string,
  endpointId: string,
): CallTarget | undefined {
  const namespace = readNamespace(project);
  return namespace === undefined || endpointId === '' ? undefined : { namespace, name: endpointId };
}
