import { z } from 'zod';
import type { ValidationResult } from '../../common/field-error.js';
import type { ValidationOptions } from '../../common/kind.js';
import { annotationsSchema, serviceNameCheck, serviceNameSchema } from '../fields.js';
import { conditionsSchema } from '../../common/conditions.js';
import { observedGenerationSchema, stringMapSchema } from '../status.js';
import { validateRegistrySpec, type SpecRules } from '../validate-spec.js';

/** Opt-in cluster DNS: a selector-less headless Service and EndpointSlices holding the Ready endpoints. */
export const registryServiceDnsSchema = z
  .object({
    enabled: z.boolean().meta({
      description:
        'enabled makes the operator maintain a headless Service named after the service id (the last segment of spec.name) in this namespace, with EndpointSlices holding the Ready endpoints, so in-cluster clients resolve {service}.{namespace}.svc (A/AAAA, and SRV per port named port-{number}); a Service of that name the operator does not manage is never touched (reported as Ready=False, DnsServiceConflict); false or absent removes what the operator created; required.',
    }),
  })
  .optional()
  .meta({ description: 'dns projects the Ready endpoints into cluster DNS; optional (absent: no DNS records).' });

export const registryServiceSpecSchema = z.object({
  name: serviceNameSchema,
  annotations: annotationsSchema('annotations', 'service'),
  dns: registryServiceDnsSchema,
});
export type RegistryServiceSpec = z.infer<typeof registryServiceSpecSchema>;

/** One resolved endpoint as the service reports it. */
export const resolvedEndpointSchema = z.object({
  name: z.string().meta({ description: "name is the endpoint's spec.name; required." }),
  address: z
    .string()
    .optional()
    .meta({ description: "address is the endpoint's IP address; absent when it has none." }),
  port: z
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .meta({ description: "port is the endpoint's port; absent when it has none." }),
  annotations: stringMapSchema.optional().meta({
    description: "annotations are the endpoint's effective annotations (reserved-prefix keys left out); optional.",
  }),
});
export type ResolvedEndpoint = z.infer<typeof resolvedEndpointSchema>;

export const registryServiceStatusSchema = z.object({
  endpoints: z.array(resolvedEndpointSchema).optional().meta({
    description: "endpoints are the service's ready RegistryEndpoints in the namespace, sorted by name; optional.",
  }),
  effectiveAnnotations: stringMapSchema
    .optional()
    .meta({ description: 'effectiveAnnotations are spec.annotations without the reserved-prefix keys; optional.' }),
  observedGeneration: observedGenerationSchema,
  conditions: conditionsSchema('RegistryService'),
});
export type RegistryServiceStatus = z.infer<typeof registryServiceStatusSchema>;

const rules: SpecRules = {
  schema: registryServiceSpecSchema,
  owned: { name: serviceNameCheck },
  annotationsField: 'annotations',
  immutable: ['name'],
};

/** Every rule of a RegistryService v1; pure and total. */
export function validateRegistryServiceV1(obj: unknown, oldObj: unknown, options: ValidationOptions): ValidationResult {
  return validateRegistrySpec(obj, oldObj, options.reservedPrefixes, rules);
}
