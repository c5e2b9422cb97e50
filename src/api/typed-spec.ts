/**
 * Specs (and previous statuses) decoded at the cache boundary, typed by the CRD's own zod schema: each top-level field of a
 * cached object's spec is parsed with its field schema, once per cached instance (the informer
 * replaces an object on every change, so the memo never goes stale). A field that breaks its schema
 * is absent here (the validator reports it as InvalidSpec); the others stay usable, so an object
 * with one bad field is still found by its references (a DeployedModel with a bad `model` still
 * blocks its endpoint's deletion).
 */
import type { z } from 'zod';
import { isRecord, type KubeObject } from './common/kube-object.js';
import { withoutUnset } from './common/unset.js';
import { deployedModelSpecSchema, deployedModelStatusSchema } from './prediction/v1/deployed-model-schema.js';
import { predictionEndpointSpecSchema, predictionEndpointStatusSchema } from './prediction/v1/endpoint-schema.js';
import { modelSpecSchema, modelStatusSchema } from './prediction/v1/model-schema.js';
import { registryEndpointV1SpecSchema, registryEndpointV1StatusSchema } from './registry/v1/endpoint.js';
import { registryServiceSpecSchema } from './registry/v1/service.js';

export type SpecView<S extends z.ZodObject> = Partial<z.infer<S>>;
/** A status as last written, field by field: what a reconciler carries over (ids, times, recorded names). */
export type StatusView<S extends z.ZodObject> = Partial<z.infer<S>>;

function fieldsDecoder<S extends z.ZodObject>(
  schema: S,
  part: (obj: KubeObject) => unknown,
): (obj: KubeObject) => Partial<z.infer<S>> {
  const memo = new WeakMap<KubeObject, Partial<z.infer<S>>>();
  const fields = Object.entries(schema.shape as Record<string, z.ZodType>);
  return (obj) => {
    const known = memo.get(obj);
    if (known !== undefined) return known;
    const value = part(obj);
    const raw = isRecord(value) ? value : {};
    const view: Record<string, unknown> = {};
    for (const [key, field] of fields) {
      if (raw[key] === undefined) continue;
      const parsed = field.safeParse(raw[key]);
      if (parsed.success) view[key] = parsed.data;
    }
    memo.set(obj, view as Partial<z.infer<S>>);
    return view as Partial<z.infer<S>>;
  };
}

export function specDecoder<S extends z.ZodObject>(schema: S): (obj: KubeObject) => SpecView<S> {
  // `""` and `null` mean unset (the seed's defaults): dropped first, so a nested `acceleratorType: ""`
  // does not make the whole `dedicatedResources` fail its schema and vanish from the view.
  return fieldsDecoder(schema, (obj) => withoutUnset(schema, obj.spec));
}

export function statusDecoder<S extends z.ZodObject>(schema: S): (obj: KubeObject) => StatusView<S> {
  return fieldsDecoder(schema, (obj) => obj.status);
}

/** The typed specs the reconcilers read. */
export const specOf = {
  deployedModel: specDecoder(deployedModelSpecSchema),
  predictionEndpoint: specDecoder(predictionEndpointSpecSchema),
  model: specDecoder(modelSpecSchema),
  registryService: specDecoder(registryServiceSpecSchema),
  /** RegistryEndpoints are cached as stored: v1, the storage version. */
  registryEndpoint: specDecoder(registryEndpointV1SpecSchema),
} as const;

/** The typed previous statuses the reconcilers carry fields over from. */
export const statusOf = {
  deployedModel: statusDecoder(deployedModelStatusSchema),
  predictionEndpoint: statusDecoder(predictionEndpointStatusSchema),
  model: statusDecoder(modelStatusSchema),
  registryEndpoint: statusDecoder(registryEndpointV1StatusSchema),
} as const;
