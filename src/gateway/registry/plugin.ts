/**
 * The registry lookup as a gateway plugin: the lookup cache over the gateway's shared informers (one per
 * kind and watched namespace, the same watches any other plugin of the gateway uses), and the routes.
 * Typed structurally on what it reads from the gateway's context, so it does not depend on the server.
 *
 * The gateway registers it in its constructor (src/gateway/server.ts), so every gateway serves the lookup,
 * `npm start`'s in-process one included (which prints a working resolve curl: dev/environment/registry-lines.ts).
 */
import type { FastifyInstance } from 'fastify';
import { resources } from '../../api/kind-bindings.js';
import type { Informer } from '../../kube/informer.js';
import type { ResourceRef } from '../../api/common/kube-object.js';
import { registryAuthHook } from '../auth/registry-hook.js';
import { RegistryLookupCache } from './cache.js';
import { registryLookupRoutes } from './routes.js';

export interface RegistryLookupGatewayContext {
  /** The gateway's shared informers: one per resource and namespace (undefined = all namespaces). */
  readonly informers: { informer(ref: ResourceRef, namespace?: string): Informer };
  /** The watch scope; empty = all namespaces. */
  readonly namespaces: readonly string[];
}

/** The lookup cache over the gateway's informers of every watched namespace; read by the routes and gRPC's ResolveService. */
export function registryLookupSource(
  ctx: RegistryLookupGatewayContext,
  reservedPrefixes: readonly string[],
): RegistryLookupCache {
  const scope: (string | undefined)[] = ctx.namespaces.length > 0 ? [...ctx.namespaces] : [undefined];
  return new RegistryLookupCache(
    scope.map((ns) => ctx.informers.informer(resources.registryServices, ns)),
    scope.map((ns) => ctx.informers.informer(resources.registryEndpoints, ns)),
    { reservedPrefixes },
  );
}

/** The lookup routes over `source`, every call authenticated and authorised (auth/registry-hook.ts). */
export function registryLookupPlugin(
  source: RegistryLookupCache,
): (app: FastifyInstance, ctx: { readonly auth: Parameters<typeof registryAuthHook>[0] }) => Promise<void> {
  return async (app, ctx) => {
    app.decorateRequest('principal', undefined);
    app.addHook('onRequest', registryAuthHook(ctx.auth, source));
    await registryLookupRoutes(app, { source });
  };
}
