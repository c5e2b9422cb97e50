/** What a service of the write API is given and gives (write-api.ts lists the services). */
import type { KubeClient } from '../../kube/kube-client.js';
import type { RoutingTable } from '../routing-table.js';
import type { ApiMethod } from './api-method.js';
import type { WriteGate } from './caller.js';
import type { OperationVerb } from './operations/verbs.js';

export interface WriteApiContext {
  readonly client: KubeClient;
  readonly gate: WriteGate;
  readonly routing: RoutingTable;
}

/** A service of the write API: its methods and the verbs of the operations they answer. */
export interface WriteService {
  readonly methods: readonly ApiMethod[];
  readonly verbs: readonly OperationVerb[];
}
