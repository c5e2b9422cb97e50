/**
 * Vertex's write API, wired: the methods every transport serves (api-method.ts) and the operation verbs they
 * register. One list; the REST routes (api-routes.ts) and the gRPC services (../grpc/api-methods.ts) are built
 * from it. A service adds itself to WRITE_SERVICES: its methods, and the verbs of the operations it answers.
 *
 * | service                          | methods                                                            | file |
 * |----------------------------------|--------------------------------------------------------------------|------|
 * | google.cloud.aiplatform.v1.ModelService | UploadModel, GetModel, ListModels, ListModelVersions, UpdateModel, MergeVersionAliases, DeleteModelVersion, DeleteModel | models/model-service.ts |
 * | google.longrunning.Operations    | GetOperation, ListOperations, WaitOperation, DeleteOperation, CancelOperation | operations/operations-service.ts |
 * | google.cloud.aiplatform.v1.EndpointService | CreateEndpoint, UpdateEndpoint, DeleteEndpoint, DeployModel, UndeployModel, MutateDeployedModel | endpoints/endpoint-service.ts |
 */
import type { ApiMethod } from './api-method.js';
import { endpointWriteService } from './endpoints/endpoint-service.js';
import type { WriteApiContext, WriteService } from './write-service.js';
import { operationsMethods, type OperationsContext } from './operations/operations-service.js';
import { OperationVerbs } from './operations/verbs.js';
import { modelService } from './models/model-service.js';

/** Each service, given the context and the operations context its writes answer through (operationOfWrite). */
const WRITE_SERVICES: readonly ((ctx: WriteApiContext, operations: OperationsContext) => WriteService)[] = [
  modelService,
  endpointWriteService,
];

export type { WriteApiContext, WriteService } from './write-service.js';

export function writeApiMethods(ctx: WriteApiContext): ApiMethod[] {
  const verbs = new OperationVerbs();
  const operations: OperationsContext = { client: ctx.client, gate: ctx.gate, verbs };
  const services = WRITE_SERVICES.map((make) => make(ctx, operations));
  for (const s of services) for (const v of s.verbs) verbs.add(v);
  return [...operationsMethods(operations), ...services.flatMap((s) => s.methods)];
}
