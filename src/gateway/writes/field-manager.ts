/**
 * Who wrote what: every API write is a server-side apply under a field manager naming the caller
 * (`vertex-api/<username>`), and stamps the object with an annotation naming the user, so `kubectl get -o yaml`
 * says who wrote each field (managedFields) and who wrote last (the annotation).
 */
import { createHash } from 'node:crypto';

/** The prefix of every API caller's field manager; a conflict with one of these is another API caller's. */
export const API_MANAGER_PREFIX = 'vertex-api/';
/** The annotation naming the user whose API write last touched the object. */
export const WRITTEN_BY_ANNOTATION = 'endpoint-operator.dev/written-by';
/** The apiserver refuses a field manager longer than this (k8s.io/apiserver fieldmanager: 128). */
export const MAX_FIELD_MANAGER_LENGTH = 128;

/**
 * The caller's field manager. Only printable ASCII survives (the apiserver needs it, and a manager name must be
 * stable and readable); a name longer than 128 characters is cut and ends with a short hash of the whole name, so
 * two long names never share a manager.
 */
export function fieldManagerOf(username: string): string {
  const printable = username.replace(/[^\x20-\x7e]/g, '?');
  const full = `${API_MANAGER_PREFIX}${printable}`;
  if (full.length <= MAX_FIELD_MANAGER_LENGTH && printable === username) return full;
  const hash = createHash('sha256').update(username, 'utf8').digest('hex').slice(0, 10);
  return `${full.slice(0, MAX_FIELD_MANAGER_LENGTH - hash.length - 1)}~${hash}`;
}

export function isApiManager(manager: string): boolean {
  return manager.startsWith(API_MANAGER_PREFIX);
}
