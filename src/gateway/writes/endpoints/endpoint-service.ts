/**
 * EndpointService's writes as a service of the write API (../write-api.ts): the endpoint's own writes
 * (endpoint-methods.ts), the deployments' (deploy-methods.ts) and the verbs of their operations
 * (endpoint-operations.ts). Generated ids take their digits from node:crypto.
 */
import { randomInt } from 'node:crypto';
import type { OperationsContext } from '../operations/operations-service.js';
import type { WriteApiContext, WriteService } from '../write-service.js';
import { deployMethods } from './deploy-methods.js';
import { endpointMethods } from './endpoint-methods.js';
import { ENDPOINT_OPERATION_VERBS } from './endpoint-operations.js';

export function endpointWriteService(ctx: WriteApiContext, operations: OperationsContext): WriteService {
  const writes = { client: ctx.client, gate: ctx.gate, random: (max: number) => randomInt(max), operations };
  return { methods: [...endpointMethods(writes), ...deployMethods(writes)], verbs: ENDPOINT_OPERATION_VERBS };
}
