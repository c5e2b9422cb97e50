/**
 * What `dev` says about DeployedModels with spec.containerSpec: their Deployment and how many replicas are
 * available on the local cluster's nodes. With the real node (the default) the model's pods run there
 * (real-node-model.ts says more); on kwok's simulated nodes alone (--simulated-nodes, or a machine that cannot
 * run the real node) the scheduler and the Deployment controller are real, the pods are not (no container runs),
 * so the demo says so, and says which servers do answer calls.
 */
import { isRecord } from '../../src/api/common/text.js';

export function servingLines(models: readonly unknown[], onRealNode = false): string[] {
  const lines = models.flatMap((m) => {
    const o = isRecord(m) ? m : {};
    const status = isRecord(o.status) ? o.status : {};
    const serving = isRecord(status.serving) ? status.serving : undefined;
    if (serving === undefined || typeof serving.deployment !== 'string') return [];
    const name = isRecord(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name : '?';
    const available = typeof status.availableReplicaCount === 'number' ? status.availableReplicaCount : 0;
    const replicas = typeof status.replicaCount === 'number' ? status.replicaCount : 0;
    const stage = typeof status.deploymentStage === 'string' ? status.deploymentStage : 'DEPLOYMENT_STAGE_UNSPECIFIED';
    return [
      `  DeployedModel ${name}: Deployment ${serving.deployment} ${available}/${replicas} replicas available (${stage}), Service ${String(serving.service)}`,
    ];
  });
  if (lines.length === 0) return [];
  return [
    '',
    'Model servers the operator runs (spec.containerSpec):',
    ...lines,
    ...(onRealNode
      ? ['  Their pods run on the real node: containerd runs the containers, the kubelet judges their probes.']
      : [
          '  Their pods are simulated: kwok marks them Running and Ready on simulated nodes, no container runs, so they answer no',
          '  calls. The calls above go to the demo model servers that really run (spec.backend).',
        ]),
  ];
}
