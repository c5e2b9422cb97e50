/**
 * The machine-type catalogue: what a Vertex `machineSpec` means on this cluster. Compute Engine machine
 * types become CPU and memory requests, accelerator types an extended resource plus the node selector
 * and tolerations that reach nodes having it, `spot` a node selector and toleration. The chart and
 * deploy/ ship it as the ConfigMap `endpoint-operator-machine-types` in the operator's namespace
 * (`--machine-catalogue`); the operator follows that ConfigMap live (src/operator/machine-catalogue-watch.ts):
 * an edit takes effect without a restart, an edit that does not parse is refused and reported while the
 * catalogue in effect stays, and a deleted ConfigMap means the built-in catalogue. A catalogue edit never
 * rolls a running model: its Deployment keeps the machine it was created with (machine-pin.ts). A machine
 * type the catalogue lacks is reported (MachineTypeUnknown), never guessed.
 */
import { z } from 'zod';

/** The ConfigMap key holding the catalogue as JSON. */
export const MACHINE_TYPES_KEY = 'machine-types.json';

const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/, {
  error: 'must be a Kubernetes quantity such as 4, 500m or 15Gi',
});
export const tolerationSchema = z.object({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: z.number().int().optional(),
});
const placement = {
  nodeSelector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(tolerationSchema).optional(),
};

export const machineCatalogueSchema = z.object({
  /** Used by `automaticResources` (Vertex picks the machine there). */
  defaultMachineType: z.string(),
  /** A machine type may name where its nodes are (a node pool per machine family), as accelerators do. */
  machineTypes: z.record(z.string(), z.object({ cpu: quantity, memory: quantity, ...placement })),
  accelerators: z.record(z.string(), z.object({ resource: z.string().min(1), ...placement })),
  spot: z.object(placement),
});
export type MachineCatalogue = z.infer<typeof machineCatalogueSchema>;
export type Toleration = z.infer<typeof tolerationSchema>;

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
    [
      ['NVIDIA_TESLA_T4', 'nvidia-tesla-t4'],
      ['NVIDIA_L4', 'nvidia-l4'],
      ['NVIDIA_TESLA_V100', 'nvidia-tesla-v100'],
      ['NVIDIA_TESLA_A100', 'nvidia-tesla-a100'],
      ['NVIDIA_A100_80GB', 'nvidia-a100-80gb'],
      ['NVIDIA_H100_80GB', 'nvidia-h100-80gb'],
    ].map(([type, label]) => [
      type,
      {
        resource: 'nvidia.com/gpu',
        nodeSelector: { 'cloud.google.com/gke-accelerator': label ?? '' },
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
      },
    ]),
  ),
  spot: {
    nodeSelector: { 'cloud.google.com/gke-spot': 'true' },
    tolerations: [{ key: 'cloud.google.com/gke-spot', operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
  },
};

/**
 * The catalogue in effect: one read from the ConfigMap or the built-in one, or none yet, with why: only when the
 * ConfigMap did not parse when the operator started. Models that need a catalogue then wait (MachineTypeUnknown,
 * the message naming the ConfigMap's problem) rather than being placed by a catalogue the cluster did not write.
 */
export type CatalogueInEffect =
  | { readonly catalogue: MachineCatalogue; readonly problem?: undefined }
  | { readonly catalogue: undefined; readonly problem: string };

/** Where reconciles read the catalogue from: read `current()` per reconcile, since it follows the ConfigMap. */
export interface MachineCatalogueSource {
  current(): CatalogueInEffect;
  /** `listener` runs after the catalogue in effect changed (not after an edit that was refused or changed nothing). */
  onChange(listener: () => void): void;
}

/** A catalogue that never changes: the built-in one without `--machine-catalogue`, or a test's. */
export function fixedCatalogue(catalogue: MachineCatalogue = DEFAULT_MACHINE_CATALOGUE): MachineCatalogueSource {
  const inEffect: CatalogueInEffect = { catalogue };
  return { current: () => inEffect, onChange: () => undefined };
}

export type ParsedCatalogue =
  { readonly ok: true; readonly catalogue: MachineCatalogue } | { readonly ok: false; readonly problem: string };

/** The catalogue a ConfigMap's `data` holds, or its first problem, naming the key and the field (never throws). */
export function parseMachineCatalogue(data: Readonly<Record<string, string>> | undefined): ParsedCatalogue {
  const text = data?.[MACHINE_TYPES_KEY];
  if (text === undefined) return { ok: false, problem: `data[${MACHINE_TYPES_KEY}] is missing` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: `data[${MACHINE_TYPES_KEY}] is not JSON: ${(e as Error).message}` };
  }
  const result = machineCatalogueSchema.safeParse(parsed);
  if (result.success) return { ok: true, catalogue: result.data };
  const issue = result.error.issues[0];
  return {
    ok: false,
    problem: `data[${MACHINE_TYPES_KEY}]: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
  };
}
