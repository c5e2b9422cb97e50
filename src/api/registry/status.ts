import { z } from 'zod';
import type { PrinterColumn } from '../common/kind.js';

export const REGISTRY_GROUP = 'registry.endpoint-operator.dev';
export const REGISTRY_CATEGORIES: readonly string[] = ['endpoint-operator'];

/** Condition types of the registry kinds. */
export const RegistryConditionTypes = {
  /** The object's spec is valid and, for an endpoint, its parent service exists. */
  Ready: 'Ready',
} as const;

/** Reasons of the `Ready` condition; every message names the field path and the fix. */
export const RegistryReasons = {
  /** Ready=True: the spec is valid and the status reflects it. */
  Reconciled: 'Reconciled',
  /** Ready=False: a rule of the spec fails (the webhook was down or bypassed). */
  InvalidSpec: 'InvalidSpec',
  /** Ready=False: no RegistryService in the namespace has the endpoint's parent `spec.name`; retried when one appears. */
  ParentNotFound: 'ParentNotFound',
  /** Ready=False: another RegistryService (in another namespace) claims the same spec.name; the older one keeps resolving. */
  NameConflict: 'NameConflict',
  /** Ready=False: spec.dns is enabled but a Service of that name exists that the operator does not manage; it is left alone. */
  DnsServiceConflict: 'DnsServiceConflict',
  /** Ready=Unknown: not reconciled yet (the initial state). */
  Pending: 'Pending',
} as const;
export type RegistryReason = (typeof RegistryReasons)[keyof typeof RegistryReasons];

// metav1.Condition's own validation (k8s.io/apimachinery/pkg/apis/meta/v1/types.go markers).
const CONDITION_TYPE_PATTERN = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export const conditionSchema = z.object({
  type: z.string().min(1).max(316).regex(CONDITION_TYPE_PATTERN).meta({ description: 'type of the condition in CamelCase, for example Ready; required.' }),
  status: z.enum(['True', 'False', 'Unknown']).meta({ description: 'status of the condition: True, False or Unknown; required.' }),
  observedGeneration: z.number().int().min(0).optional().meta({ description: 'observedGeneration is the metadata.generation the condition was computed from; optional.' }),
  lastTransitionTime: z.string().meta({ format: 'date-time', description: 'lastTransitionTime is when status last changed (RFC 3339); required.' }),
  reason: z.string().min(1).max(1024).regex(CONDITION_REASON_PATTERN).meta({ description: 'reason is a CamelCase code for the last transition, for example ParentNotFound; required.' }),
  message: z.string().max(32768).meta({ description: 'message explains the condition, naming the field path and the fix; required (may be empty).' }),
});
export type Condition = z.infer<typeof conditionSchema>;

/** `conditions`, a list keyed by `type` so server-side apply merges one condition at a time. */
export const conditionsSchema = z
  .array(conditionSchema)
  .optional()
  .meta({
    description: 'conditions hold Ready (reasons Reconciled, InvalidSpec, ParentNotFound, NameConflict, DnsServiceConflict, Pending); optional.',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });

export const observedGenerationSchema = z
  .number()
  .int()
  .min(0)
  .optional()
  .meta({ description: 'observedGeneration is the metadata.generation the status was computed from; optional.' });

/** Annotation maps in status (already validated in spec). */
export const stringMapSchema = z.record(z.string(), z.string());

export const readyColumns: readonly PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
];
export const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
