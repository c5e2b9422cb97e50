/**
 * Stage 2, authenticate and authorise: the caller's bearer token (TokenReview) and its permission on
 * the endpoint the path names (SubjectAccessReview), both through the bounded decision caches
 * (auth/gateway-auth.ts). Before the body is read or the endpoint looked up, so a refused caller costs
 * no body and learns nothing about what exists. A path no namespace can hold is NOT_FOUND once the
 * caller is authenticated.
 */
import type { GatewayAuth, Principal } from '../auth/gateway-auth.js';
import { endpointNotFound, type AdmittedCall } from './admit.js';

export function authorise(
  auth: Pick<GatewayAuth, 'checkNamed'>,
  call: AdmittedCall,
  authorization: string | string[] | undefined,
): Promise<Principal> {
  return auth.checkNamed(call.method, authorization, call.target, call.resourceName, () =>
    endpointNotFound(call.resourceName),
  );
}
