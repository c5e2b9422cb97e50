/**
 * The machine-type catalogue: what a Vertex `machineSpec` means on this cluster. Compute Engine machine
 * types become CPU and memory requests, accelerator types an extended resource plus the node selector
 * and tolerations that reach nodes having it, `spot` a node selector and toleration. The chart and
 * deploy/ ship it as the ConfigMap `endpoint-operator-machine-types` in the operator's namespace, read at
 * start-up (`--machine-catalogue`); a cluster overrides it by editing that ConfigMap and restarting the
 * operator. A machine type it lacks is reported (MachineTypeUnknown), never guessed.
 */
import { z } from 'zod';
import type { KubeClient } from '../../runtime/kube-client.js';
import type { KubeObject } from '../../runtime/kube-object.js';

/** The ConfigMap key holding the catalogue as JSON. */
export const MACHINE_TYPES_KEY = 'machine-types.json';

const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/, { error: 'must be a Kubernetes quantity such as 4, 500m or 15Gi' });
const toleration = z.object({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
});
const placement = {
  nodeSelector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(toleration).optional(),
};

export const machineCatalogueSchema = z.object({
  /** Used by `automaticResources` (Vertex picks the machine there). */
  defaultMachineType: z.string(),
  machineTypes: z.record(z.string(), z.object({ cpu: quantity, memory: quantity })),
  accelerators: z.record(z.string(), z.object({ resource: z.string().min(1), ...placement })),
  spot: z.object(placement),
});
export type MachineCatalogue = z.infer<typeof machineCatalogueSchema>;
export type Toleration = z.infer<typeof toleration>;

/**
 * The built-in catalogue: the Compute Engine shapes Vertex prediction offers most often (vCPU and GiB
 * as Google publishes them), NVIDIA accelerators as the device plugin's `nvidia.com/gpu` on GKE's
 * accelerator label and taint, and GKE's spot label and taint.
 */
export const DEFAULT_MACHINE_CATALOGUE: MachineCatalogue = {
  defaultMachineType: 'n1-standard-2',
  machineTypes: {
    'n1-standard-2': { cpu: '2', memory: '7680Mi' },
    'n1-standard-4': { cpu: '4', memory: '15Gi' },
    'n1-standard-8': { cpu: '8', memory: '30Gi' },
    'n1-standard-16': { cpu: '16', memory: '60Gi' },
    'n1-highmem-2': { cpu: '2', memory: '13Gi' },
    'n1-highmem-4': { cpu: '4', memory: '26Gi' },
    'n1-highcpu-4': { cpu: '4', memory: '3686Mi' },
    'e2-standard-2': { cpu: '2', memory: '8Gi' },
    'e2-standard-4': { cpu: '4', memory: '16Gi' },
    'e2-standard-8': { cpu: '8', memory: '32Gi' },
    'n2-standard-4': { cpu: '4', memory: '16Gi' },
    'n2-standard-8': { cpu: '8', memory: '32Gi' },
    'g2-standard-4': { cpu: '4', memory: '16Gi' },
    'a2-highgpu-1g': { cpu: '12', memory: '85Gi' },
  },
  accelerators: Object.fromEntries(
    [['NVIDIA_TESLA_T4', 'nvidia-tesla-t4'], ['NVIDIA_L4', 'nvidia-l4'], ['NVIDIA_TESLA_V100', 'nvidia-tesla-v100'], ['NVIDIA_TESLA_A100', 'nvidia-tesla-a100'], ['NVIDIA_A100_80GB', 'nvidia-a100-80gb'], ['NVIDIA_H100_80GB', 'nvidia-h100-80gb']]
      .map(([type, label]) => [type, {
        resource: 'nvidia.com/gpu',
        nodeSelector: { 'cloud.google.com/gke-accelerator': label ?? '' },
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
      }]),
  ),
  spot: {
    nodeSelector: { 'cloud.google.com/gke-spot': 'true' },
    tolerations: [{ key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
  },
};

export type CatalogueSource =
  | { readonly catalogue: MachineCatalogue; readonly source: 'configmap' }
  | { readonly catalogue: MachineCatalogue; readonly source: 'built-in'; readonly why: string };

/**
 * The catalogue of ConfigMap `namespace/name`. A missing ConfigMap (an install without it, a local run) is the
 * built-in catalogue, said so; one that exists but does not parse throws with the key and the first problem,
 * since running with a catalogue other than the one the cluster wrote would place models on the wrong nodes.
 */
export async function loadMachineCatalogue(client: KubeClient, namespace: string, name: string): Promise<CatalogueSource> {
  const ref = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
  const cm = await client.get<KubeObject & { data?: Record<string, string> }>(ref, namespace, name);
  if (cm === undefined) return { catalogue: DEFAULT_MACHINE_CATALOGUE, source: 'built-in', why: `ConfigMap ${namespace}/${name} not found` };
  const text = cm.data?.[MACHINE_TYPES_KEY];
  const where = `ConfigMap ${namespace}/${name} data[${MACHINE_TYPES_KEY}]`;
  if (text === undefined) throw new Error(`machine catalogue: ${where} is missing`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`machine catalogue: ${where} is not JSON: ${(e as Error).message}`);
  }
  const result = machineCatalogueSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`machine catalogue: ${where}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return { catalogue: result.data, source: 'configmap' };
}
