/**
 * Who may write: the caller authenticated as for predictions (TokenReview), then a SubjectAccessReview AS THE
 * CALLER for the Kubernetes verb the write performs (auth/attributes.ts CALL_RULES: create/patch/delete on
 * models, predictionendpoints, deployedmodels) in the namespace the request's project maps to. Only then does the
 * gateway write, with its own ServiceAccount (which holds no `impersonate`), under the caller's field manager.
 */
import type { GatewayAuth } from '../auth/gateway-auth.js';
import { permissionDeniedMessage, type AuthCall, type WriteCall } from '../auth/attributes.js';
import { GoogleApiError } from '../google-errors.js';
import { fieldManagerOf } from './field-manager.js';

/** The chart value (and gateway flag) that turns the write API off. */
export const API_WRITES_SETTING = 'gateway.apiWrites.enabled (gateway flag --api-writes)';

export interface WriteGate {
  readonly auth: Pick<GatewayAuth, 'enabled' | 'authenticate' | 'authorize'>;
  readonly readNamespace: (project: string) => string | undefined;
  /** false: every write method answers FAILED_PRECONDITION naming API_WRITES_SETTING. */
  readonly writesEnabled: boolean;
}

/** An authorised writer: the user, their field manager and the namespace written. */
export interface WriteCaller {
  readonly username: string;
  readonly manager: string;
  readonly namespace: string;
}

/** What a write names: its project (→ namespace), the object's name ('' for a collection) and its resource name. */
export interface WriteScope {
  readonly project: string;
  readonly name: string;
  readonly described: string;
}

/** FAILED_PRECONDITION unless this gateway serves writes at all (called first, before any credential is read). */
export function checkWritesServed(gate: Pick<WriteGate, 'writesEnabled' | 'auth'>): void {
  if (!gate.writesEnabled)
    throw new GoogleApiError(
      'FAILED_PRECONDITION',
      `writes through this API are turned off on this gateway by ${API_WRITES_SETTING}=false: change the objects with kubectl apply or Git, or ask the cluster's operators to set it to true`,
    );
  if (!gate.auth.enabled)
    throw new GoogleApiError(
      'FAILED_PRECONDITION',
      'writes need an authenticated caller: this gateway runs with --auth=none, so no field manager could name the writer; run it with authentication on',
    );
}

export async function authoriseWrite(
  gate: WriteGate,
  authorization: string | undefined,
  call: WriteCall,
  scope: WriteScope,
): Promise<WriteCaller> {
  checkWritesServed(gate);
  const principal = await gate.auth.authenticate(call, authorization);
  const namespace = gate.readNamespace(scope.project);
  const username = principal.user?.username;
  if (namespace === undefined || username === undefined) {
    // No namespace holds the project: refused like a namespace the caller may not write (nothing is revealed).
    throw new GoogleApiError('PERMISSION_DENIED', permissionDeniedMessage(call, scope.described, undefined));
  }
  await gate.auth.authorize(call, principal, { namespace, name: scope.name }, scope.described);
  return { username, manager: fieldManagerOf(username), namespace };
}

/** A read of the write API (GetModel, GetOperation...): authorised as the caller when auth is on; the namespace read. */
export async function authoriseRead(
  gate: Pick<WriteGate, 'auth' | 'readNamespace'>,
  authorization: string | undefined,
  call: AuthCall,
  scope: WriteScope,
  notFound: () => GoogleApiError,
): Promise<string> {
  const principal = await gate.auth.authenticate(call, authorization);
  const namespace = gate.readNamespace(scope.project);
  if (namespace === undefined) throw notFound();
  await gate.auth.authorize(call, principal, { namespace, name: scope.name }, scope.described);
  return namespace;
}
