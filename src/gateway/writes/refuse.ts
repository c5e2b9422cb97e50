/**
 * Git-only namespaces and objects: `endpoint-operator.dev/api-writes: refuse` on a Namespace or on the object a
 * write touches makes every API write there FAILED_PRECONDITION, naming the annotation and where it is. Checked
 * before any write (and before any dry run), so a refused write changes nothing.
 */
import type { KubeObject } from '../../kube/kube-client.js';
import { GoogleApiError } from '../google-errors.js';

export const API_WRITES_ANNOTATION = 'endpoint-operator.dev/api-writes';
export const REFUSE = 'refuse';

/** The refusal for `obj` (a Namespace or the object written), or undefined when it allows API writes. */
export function refusalOf(obj: KubeObject | undefined, where: string): GoogleApiError | undefined {
  const value = obj?.metadata.annotations?.[API_WRITES_ANNOTATION];
  if (value?.trim().toLowerCase() !== REFUSE) return undefined;
  return new GoogleApiError(
    'FAILED_PRECONDITION',
    `${where} has the annotation ${API_WRITES_ANNOTATION}: ${REFUSE}: it is changed through Git (kubectl apply, Argo CD, Flux) only, not through this API; remove the annotation to allow API writes`,
  );
}
