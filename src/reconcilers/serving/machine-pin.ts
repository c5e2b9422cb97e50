/**
 * The machine a model's replicas run on is fixed when its Deployment is created: the CPU, memory, extended
 * resources, node selector and tolerations the catalogue gave then are recorded in an annotation on the
 * Deployment, and every later apply uses that record, not the catalogue in effect.
 *
 * Why not follow catalogue edits: `machineSpec` is immutable and model pods never roll in place (a new
 * version is a new DeployedModel plus a split change, as in Vertex, where a deployed model keeps its
 * machine). A catalogue edit is one team's change to every tenant's models at once; re-applying it would
 * roll every model of that type in the cluster together, and a type removed from the catalogue would stop
 * models that run fine. So an edit shapes models created after it (and a Deployment re-created after a
 * deletion); a running model moves to a new shape the way it moves to a new image: a new DeployedModel.
 * A Deployment written before this record existed has none: it takes the catalogue in effect once (which,
 * unchanged, is its own shape: the apply then adds only the annotation, and pods do not roll).
 */
import { z } from 'zod';
import { PREDICTION_GROUP } from '../../api/prediction/v1/names.js';
import type { DeployedModelSpec } from '../../api/prediction/v1/deployed-model-schema.js';
import type { KubeObject } from '../../api/common/kube-object.js';
import {
  MACHINE_TYPES_KEY,
  tolerationSchema,
  type CatalogueInEffect,
} from '../../api/prediction/v1/machine-catalogue.js';
import { resolveMachine, type Resolved } from './serving-plan.js';

/** On a model's Deployment: the machine (JSON) its pod template was created with. */
export const MACHINE_ANNOTATION = `${PREDICTION_GROUP}/machine`;

export type Machine = Extract<Resolved, { ok: true }>;

const pinSchema = z.object({
  resources: z.record(z.string(), z.string()),
  nodeSelector: z.record(z.string(), z.string()),
  tolerations: z.array(tolerationSchema),
});

/** The machine recorded on the model's own Deployment; undefined without one (or with a record edited out of shape). */
export function pinnedMachine(deployment: KubeObject | undefined): Machine | undefined {
  const text = deployment?.metadata.annotations?.[MACHINE_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const pin = pinSchema.safeParse(JSON.parse(text));
    return pin.success ? { ok: true, ...pin.data } : undefined;
  } catch {
    return undefined;
  }
}

/** `deployment` (a manifest to apply) carrying the record of `machine`. */
export function withMachinePin(deployment: KubeObject, machine: Machine): KubeObject {
  const pin = JSON.stringify({
    resources: machine.resources,
    nodeSelector: machine.nodeSelector,
    tolerations: machine.tolerations,
  });
  return {
    ...deployment,
    metadata: {
      ...deployment.metadata,
      annotations: { ...deployment.metadata.annotations, [MACHINE_ANNOTATION]: pin },
    },
  };
}

/**
 * The machine to apply for a model: the one recorded on `ownDeployment` (the model's, owned by it), else the
 * catalogue's; an error message when neither can place it (MachineTypeUnknown).
 */
export function machineFor(
  spec: DeployedModelSpec,
  inEffect: CatalogueInEffect,
  ownDeployment: KubeObject | undefined,
): Resolved {
  const pinned = pinnedMachine(ownDeployment);
  if (pinned !== undefined) return pinned;
  if (inEffect.catalogue === undefined) {
    return {
      ok: false,
      message: `no machine catalogue is in effect: ${inEffect.problem}; fix the ConfigMap's ${MACHINE_TYPES_KEY} (the model is deployed as soon as it parses)`,
    };
  }
  return resolveMachine(spec, inEffect.catalogue);
}
