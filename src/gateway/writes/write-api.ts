/**
 * Vertex's write API, wired: the methods every transport serves (api-method.ts) and the operation verbs they
 * register. One list; the REST routes (api-routes.ts) and the gRPC services (../grpc/api-methods.ts) are built
 * from it.
 *
 * | service                          | methods                                                            | file |
 * |----------------------------------|--------------------------------------------------------------------|------|
 * | google.longrunning.Operations    | GetOperation, ListOperations, WaitOperation, DeleteOperation, CancelOperation | operations/operations-service.ts |
 */
import type { KubeClient } from '../../kube/kube-client.js';
import type { RoutingTable } from '../routing-table.js';
import type { ApiMethod } from './api-method.js';
import type { WriteGate } from './caller.js';
import { operationsMethods } from './operations/operations-service.js';
import { OperationVerbs } from './operations/verbs.js';

export interface WriteApiContext {
  readonly client: KubeClient;
  readonly gate: WriteGate;
  readonly routing: RoutingTable;
}

export function writeApiMethods(ctx: WriteApiContext): ApiMethod[] {
  const verbs = new OperationVerbs();
  return [...operationsMethods({ client: ctx.client, gate: ctx.gate, verbs })];
}
