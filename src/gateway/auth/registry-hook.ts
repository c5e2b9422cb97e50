/**
 * The registry lookup's guard, a fastify `onRequest` hook (as @fastify/bearer-auth: an unauthenticated
 * request never reaches body parsing). A Service Directory name (`.../namespaces/{sd namespace}/services/{id}`)
 * is a RegistryService's spec.name, not a Kubernetes namespace: the owner of the name is found in the
 * informer cache (no apiserver call) and the SubjectAccessReview is made on it. The refusal names only
 * the requested name, and a name nobody owns is refused the same way, so the answer of a caller without
 * permission does not tell whether (or in which namespace) the service exists.
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AuthCall, CallTarget } from './attributes.js';
import type { GatewayAuth, Principal } from './gateway-auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, set by the auth hook (undefined before it ran). */
    principal: Principal | undefined;
  }
}

export interface ServiceOwners {
  ownerOf(name: string): CallTarget | undefined;
}

const SERVICE_PATH =
  /^\/v1\/(projects\/[^/?#]+\/locations\/[^/?#]+\/namespaces\/[^/?#]+\/services\/[^/?#:]+)(:resolve|\/endpoints)?(?:\?|$)/;

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** Which call a request is; undefined for paths and methods the routes answer 404 (nothing to protect). */
function callOf(req: FastifyRequest): { call: AuthCall; name: string } | undefined {
  const m = SERVICE_PATH.exec(req.url);
  if (m === null) return undefined;
  const call: AuthCall = m[2] === ':resolve' ? 'resolve' : m[2] === '/endpoints' ? 'listEndpoints' : 'getService';
  if ((call === 'resolve') !== (req.method === 'POST')) return undefined;
  return { call, name: decodePath(m[1] ?? '') };
}

type LookupAuth = Pick<GatewayAuth, 'enabled' | 'authenticate' | 'authorize' | 'deny'>;

/** Authenticates `call` on the service `name` and authorises it on the name's owner; the caller's principal. */
export async function guardLookup(
  auth: LookupAuth,
  owners: ServiceOwners,
  call: AuthCall,
  name: string,
  authorization: string | undefined,
): Promise<Principal> {
  const principal = await auth.authenticate(call, authorization);
  if (!auth.enabled) return principal;
  const owner = owners.ownerOf(name);
  if (owner === undefined) throw auth.deny(call, name);
  await auth.authorize(call, principal, owner, name, false);
  return principal;
}

export function registryAuthHook(auth: LookupAuth, owners: ServiceOwners): onRequestAsyncHookHandler {
  return async (req) => {
    const found = callOf(req);
    if (found === undefined) return;
    req.principal = await guardLookup(auth, owners, found.call, found.name, req.headers.authorization);
  };
}
