/**
 * google.cloud.aiplatform.v1.ModelService on Model objects (docs/models.md), over gRPC and REST (Google's paths):
 *
 *   UploadModel          POST   /v1/{parent}/models:upload           → Operation (UploadModelResponse{model, modelVersionId})
 *   GetModel             GET    /v1/{name=…/models/*}  (`@version` / `@alias`)
 *   ListModels           GET    /v1/{parent}/models    (filter, paging)
 *   ListModelVersions    GET    /v1/{name}:listVersions
 *   UpdateModel          PATCH  /v1/{model.name}       (update_mask: display_name, description, labels) → Model
 *   MergeVersionAliases  POST   /v1/{name}:mergeVersionAliases       → Model
 *   DeleteModelVersion   DELETE /v1/{name}:deleteVersion             → Operation (Empty)
 *   DeleteModel          DELETE /v1/{name}                           → Operation (Empty)
 *
 * Reads are `get`/`list` on models as the caller; writes are server-side applies under the caller's manager
 * (../apply.ts). An upload's operation is done when the Model is Ready at the generation the upload produced.
 */
import { ModelService } from '../../grpc/services.js';
import type { ApiMethod } from '../api-method.js';
import { type OperationsContext } from '../operations/operations-service.js';
import type { WriteApiContext, WriteService } from '../write-service.js';
import { modelReads } from './model-reads.js';
import { modelWrites } from './model-writes.js';
import { modelVerbs } from './model-operations.js';

export function modelService(ctx: WriteApiContext, ops: OperationsContext): WriteService {
  const { getModel, listModels, listVersions } = modelReads(ctx);
  const { upload, updateModel, mergeVersionAliases, deleteVersion, deleteModel } = modelWrites(ctx, ops);
  const verbs = modelVerbs(ctx);

  const location = '/v1/{parent=projects/*/locations/*}';
  const model = '/v1/{name=projects/*/locations/*/models/*}';
  const methods: ApiMethod[] = [
    {
      service: ModelService,
      name: 'UploadModel',
      http: [{ method: 'POST', path: `${location}/models:upload`, body: '*' }],
      call: upload,
    },
    { service: ModelService, name: 'GetModel', http: [{ method: 'GET', path: model }], call: getModel },
    {
      service: ModelService,
      name: 'ListModels',
      http: [{ method: 'GET', path: `${location}/models` }],
      call: listModels,
    },
    {
      service: ModelService,
      name: 'ListModelVersions',
      http: [{ method: 'GET', path: `${model}:listVersions` }],
      call: listVersions,
    },
    {
      service: ModelService,
      name: 'UpdateModel',
      http: [{ method: 'PATCH', path: '/v1/{model.name=projects/*/locations/*/models/*}', body: 'model' }],
      call: updateModel,
    },
    {
      service: ModelService,
      name: 'MergeVersionAliases',
      http: [{ method: 'POST', path: `${model}:mergeVersionAliases`, body: '*' }],
      call: mergeVersionAliases,
    },
    {
      service: ModelService,
      name: 'DeleteModelVersion',
      http: [{ method: 'DELETE', path: `${model}:deleteVersion` }],
      call: deleteVersion,
    },
    { service: ModelService, name: 'DeleteModel', http: [{ method: 'DELETE', path: model }], call: deleteModel },
  ];
  return { methods, verbs };
}
