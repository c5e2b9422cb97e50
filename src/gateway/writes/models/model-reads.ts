/** ModelService's reads, as the caller (`get`/`list` on models): GetModel, ListModels, ListModelVersions. */
import { resources } from '../../../api/kind-bindings.js';
import { compileResourceFilter } from '../../endpoints/filter.js';
import { GoogleApiError } from '../../google-errors.js';
import { pageOf } from '../../paging.js';
import type { CallMeta } from '../api-method.js';
import { authoriseRead } from '../caller.js';
import { modelSpecOf, versionIds, type VertexModel } from './vertex-model.js';
import type { WriteApiContext } from '../write-service.js';
import { modelName, locationOf, str, notFound, modelAccess } from './model-target.js';

/** A List request's filter (compiled) and page, read once for ListModels and ListModelVersions. */
function listRequest(req: Record<string, unknown>) {
  const text = str(req.filter);
  return {
    filter: compileResourceFilter(text, 'model'),
    page: {
      filter: text,
      pageSize: typeof req.pageSize === 'number' ? req.pageSize : undefined,
      pageToken: str(req.pageToken) || undefined,
    },
  };
}

export function modelReads(ctx: WriteApiContext) {
  const { client, gate } = ctx;
  const { toVertex, readModel } = modelAccess(ctx);

  async function getModel(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    const { obj } = await readModel(name, meta);
    const found = toVertex(obj, name.at, name.resource);
    if (found === undefined) throw notFound(str(req.name));
    return found;
  }

  async function listModels(req: Record<string, unknown>, meta: CallMeta) {
    const { project, location } = locationOf('parent', str(req.parent));
    const parent = `projects/${project}/locations/${location}`;
    const { filter, page } = listRequest(req);
    const namespace = await authoriseRead(
      gate,
      meta.authorization,
      'listModels',
      { project, name: '', described: parent },
      () =>
        gate.auth.enabled
          ? new GoogleApiError('PERMISSION_DENIED', `Permission 'models.list' denied on resource '${parent}'`)
          : new GoogleApiError('NOT_FOUND', `${parent} not found.`),
    );
    const { items } = await client.list(resources.models, namespace);
    const models = items
      .map((obj) => toVertex(obj, undefined, `${parent}/models/${obj.metadata.name ?? ''}`))
      .filter((m): m is VertexModel => m !== undefined)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const { page: found, nextPageToken } = pageOf(models, (m) => m.name, filter, page);
    return {
      ...(found.length > 0 ? { models: found } : {}),
      ...(nextPageToken !== undefined ? { nextPageToken } : {}),
    };
  }

  async function listVersions(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    const { obj } = await readModel(name, meta);
    const { filter, page } = listRequest(req);
    const versions = versionIds(modelSpecOf(obj))
      .map((id) => toVertex(obj, id, name.resource))
      .filter((m): m is VertexModel => m !== undefined);
    const key = (m: VertexModel) => m.versionId.padStart(10, '0');
    const { page: found, nextPageToken } = pageOf(versions, key, filter, page);
    return {
      ...(found.length > 0 ? { models: found } : {}),
      ...(nextPageToken !== undefined ? { nextPageToken } : {}),
    };
  }

  return { getModel, listModels, listVersions };
}
