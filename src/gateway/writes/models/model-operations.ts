/**
 * The operations ModelService's writes answer, derived from the Model they name (../operations/verbs.ts): an upload
 * is done when the Model is Ready at the generation it produced; a delete when the object (or the version) is gone.
 */
import { resources } from '../../../api/kind-bindings.js';
import { GENERIC_METADATA } from '../operations/operation-message.js';
import { deletedState, reconciledState, type OperationVerb } from '../operations/verbs.js';
import { modelSpecOf, versionAt } from './vertex-model.js';
import type { WriteApiContext } from '../write-service.js';
import { modelName, modelAccess } from './model-target.js';

export function modelVerbs(ctx: WriteApiContext): OperationVerb[] {
  const { toVertex } = modelAccess(ctx);
  return [
    {
      verb: 'upload',
      metadataType: 'google.cloud.aiplatform.v1.UploadModelOperationMetadata',
      responseType: 'google.cloud.aiplatform.v1.UploadModelResponse',
      derive: async ({ ref, read }) => {
        const { id } = modelName('name', ref.resource);
        const obj = await read(resources.models, id);
        const state = reconciledState(obj, ref.generation ?? 0, `Model ${ref.resource}`);
        if (state !== 'ready') return state;
        return {
          done: true,
          response: { model: ref.resource, modelVersionId: ref.extra?.versionId ?? '' },
          object: obj,
        };
      },
    },
    {
      verb: 'deleteVersion',
      metadataType: 'google.cloud.aiplatform.v1.DeleteOperationMetadata',
      responseType: 'google.protobuf.Empty',
      derive: async ({ ref, read }) => {
        const obj = await read(resources.models, modelName('name', ref.resource).id);
        const gone = obj === undefined || versionAt(modelSpecOf(obj), ref.extra?.versionId) === undefined;
        return gone ? { done: true, response: {}, object: obj } : { done: false, object: obj };
      },
    },
    {
      verb: 'delete',
      metadataType: 'google.cloud.aiplatform.v1.DeleteOperationMetadata',
      responseType: 'google.protobuf.Empty',
      derive: async ({ ref, read }) =>
        deletedState(await read(resources.models, modelName('name', ref.resource).id), ref.uid),
    },
    {
      // UpdateModel and MergeVersionAliases answer the Model at once; ListOperations still lists them.
      verb: 'update',
      metadataType: GENERIC_METADATA,
      responseType: 'google.cloud.aiplatform.v1.Model',
      derive: async ({ ref, read }) => {
        const obj = await read(resources.models, modelName('name', ref.resource).id);
        const state = reconciledState(obj, ref.generation ?? 0, `Model ${ref.resource}`);
        if (state !== 'ready' || obj === undefined) return state === 'ready' ? { done: false } : state;
        return { done: true, response: { ...toVertex(obj, undefined, ref.resource) }, object: obj };
      },
    },
  ];
}
