import { z } from 'zod';
import type { ValidationResult } from '../../common/field-error.js';
import type { ValidationOptions } from '../../common/kind.js';
import {
  addressCheck,
  addressSchema,
  annotationsSchema,
  endpointNameCheck,
  endpointNameSchema,
  networkCheck,
  networkSchema,
  portCheck,
  portSchema,
} from '../fields.js';
import { conditionsSchema } from '../../common/conditions.js';
import { observedGenerationSchema, stringMapSchema } from '../status.js';
import { IMMUTABLE_DETAIL, validateRegistrySpec, type SpecRules } from '../validate-spec.js';

/**
 * RegistryEndpoint v1beta1 (Service Directory v1beta1): `metadata` is v1's `annotations` under its
 * old name; `network`, `status.createTime` and `status.updateTime` exist only here and survive a
 * trip through v1 in the conversion annotation (see ../conversion.ts).
 */
export const registryEndpointV1beta1SpecSchema = z
  .object({
    name: endpointNameSchema,
    address: addressSchema,
    port: portSchema,
    metadata: annotationsSchema('metadata', 'endpoint'),
    network: networkSchema,
  })
  .meta({
    // `self == oldSelf` on spec.network only runs when both values exist; this one also stops adding or
    // removing it. "" is the unset network (the seed's default), so absent and "" are the same value.
    'x-kubernetes-validations': [
      {
        rule: "(has(self.network) ? self.network : '') == (has(oldSelf.network) ? oldSelf.network : '')",
        fieldPath: '.network',
        message: `field is immutable: ${IMMUTABLE_DETAIL}`,
        messageExpression: `'field is immutable (was ' + (has(oldSelf.network) && oldSelf.network != '' ? '"' + oldSelf.network + '"' : 'unset') + '): ${IMMUTABLE_DETAIL}'`,
      },
    ],
  });
export type RegistryEndpointV1beta1Spec = z.infer<typeof registryEndpointV1beta1SpecSchema>;

export const registryEndpointV1beta1StatusSchema = z.object({
  name: z.string().optional().meta({
    description:
      'name is spec.name as first accepted; the operator reports InvalidSpec if spec.name ever differs from it (immutability defence); optional.',
  }),
  effectiveMetadata: stringMapSchema.optional().meta({
    description: 'effectiveMetadata is spec.metadata without the reserved-prefix keys, as clients see it; optional.',
  }),
  createTime: z
    .string()
    .optional()
    .meta({ format: 'date-time', description: 'createTime is when the endpoint was registered (RFC 3339); optional.' }),
  updateTime: z.string().optional().meta({
    format: 'date-time',
    description: 'updateTime is when the endpoint was last changed (RFC 3339); optional.',
  }),
  observedGeneration: observedGenerationSchema,
  conditions: conditionsSchema('RegistryEndpoint'),
});
export type RegistryEndpointV1beta1Status = z.infer<typeof registryEndpointV1beta1StatusSchema>;

const rules: SpecRules = {
  schema: registryEndpointV1beta1SpecSchema,
  owned: { name: endpointNameCheck, address: addressCheck, port: portCheck, network: networkCheck },
  annotationsField: 'metadata',
  immutable: ['name', 'network'],
};

/** Every rule of a RegistryEndpoint v1beta1; pure and total. */
export function validateRegistryEndpointV1beta1(
  obj: unknown,
  oldObj: unknown,
  options: ValidationOptions,
): ValidationResult {
  return validateRegistrySpec(obj, oldObj, options.reservedPrefixes, rules);
}
