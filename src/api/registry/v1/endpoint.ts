import { z } from 'zod';
import type { ValidationResult } from '../../common/field-error.js';
import type { ValidationOptions } from '../../common/kind.js';
import {
  addressCheck,
  addressSchema,
  annotationsSchema,
  endpointNameCheck,
  endpointNameSchema,
  portCheck,
  portSchema,
} from '../fields.js';
import { conditionsSchema } from '../../common/conditions.js';
import { observedGenerationSchema, stringMapSchema } from '../status.js';
import { validateRegistrySpec, type SpecRules } from '../validate-spec.js';

/** RegistryEndpoint v1, the storage version and the hub of conversion. */
export const registryEndpointV1SpecSchema = z.object({
  name: endpointNameSchema,
  address: addressSchema,
  port: portSchema,
  annotations: annotationsSchema('annotations', 'endpoint'),
});
export type RegistryEndpointV1Spec = z.infer<typeof registryEndpointV1SpecSchema>;

export const registryEndpointV1StatusSchema = z.object({
  name: z.string().optional().meta({
    description:
      'name is spec.name as first accepted; the operator reports InvalidSpec if spec.name ever differs from it (immutability defence); optional.',
  }),
  createTime: z
    .string()
    .optional()
    .meta({ format: 'date-time', description: 'createTime is when the endpoint was registered (RFC 3339); optional.' }),
  updateTime: z.string().optional().meta({
    format: 'date-time',
    description: 'updateTime is when the endpoint spec last changed (RFC 3339); optional.',
  }),
  effectiveAnnotations: stringMapSchema.optional().meta({
    description:
      'effectiveAnnotations are spec.annotations without the reserved-prefix keys, as clients see them; optional.',
  }),
  observedGeneration: observedGenerationSchema,
  conditions: conditionsSchema('RegistryEndpoint'),
});
export type RegistryEndpointV1Status = z.infer<typeof registryEndpointV1StatusSchema>;

const rules: SpecRules = {
  schema: registryEndpointV1SpecSchema,
  owned: { name: endpointNameCheck, address: addressCheck, port: portCheck },
  annotationsField: 'annotations',
  immutable: ['name'],
};

/** Every rule of a RegistryEndpoint v1; pure and total. */
export function validateRegistryEndpointV1(
  obj: unknown,
  oldObj: unknown,
  options: ValidationOptions,
): ValidationResult {
  return validateRegistrySpec(obj, oldObj, options.reservedPrefixes, rules);
}
