/**
 * DeployModel's `deployed_model.model`: a Model of the endpoint's own project and location (the Model kind, issue
 * 47), optionally `@{version id}` or `@{alias}`. A malformed name or another project is INVALID_ARGUMENT on the field;
 * a Model, version or alias that does not exist is NOT_FOUND naming it, as Vertex answers an unknown model. Checked
 * before anything is written; the operator resolves the reference again when it deploys (reconcilers/model-reference.ts).
 */
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';
import { resources } from '../../../api/kind-bindings.js';
import { DEFAULT_ALIAS, MODEL_VERSION_ID } from '../../../api/prediction/v1/model-schema.js';
import { modelResourceName, parseModelName } from '../../../api/prediction/v1/names.js';
import { GoogleApiError } from '../../google-errors.js';
import type { EndpointTarget, EndpointWritesContext } from './endpoint-target.js';

function ids(list: unknown, key: string): string[] {
  return Array.isArray(list) ? list.filter(isRecord).map((x) => String(x[key] ?? '')) : [];
}

/** The Model object `model` names (for the caller to read); throws the request's answer when it names none. */
export async function checkModelReference(
  ctx: EndpointWritesContext,
  namespace: string,
  endpoint: EndpointTarget,
  model: string,
  signal?: AbortSignal,
): Promise<KubeObject> {
  const field = 'deployed_model.model';
  const parts = parseModelName(model);
  if (parts === undefined)
    throw GoogleApiError.badRequest([
      {
        field,
        description: `${JSON.stringify(model.slice(0, 256))}: must be projects/{project}/locations/{location}/models/{model}, optionally followed by @{version id or alias}`,
      },
    ]);
  if (parts.project !== endpoint.project || parts.location !== endpoint.location)
    throw GoogleApiError.badRequest([
      {
        field,
        description: `${JSON.stringify(model)}: must be a Model of the endpoint's project and location (projects/${endpoint.project}/locations/${endpoint.location}/models/{model})`,
      },
    ]);
  const name = modelResourceName(parts.project, parts.location, parts.model);
  const found = await ctx.client.get(resources.models, namespace, parts.model, { signal });
  if (found === undefined)
    throw new GoogleApiError(
      'NOT_FOUND',
      `Model ${JSON.stringify(name)} not found: upload it first (UploadModel), or name a Model of this project.`,
    );
  const spec = isRecord(found.spec) ? found.spec : {};
  const at = parts.at ?? DEFAULT_ALIAS;
  if (MODEL_VERSION_ID.test(at)) {
    const versions = ids(spec.versions, 'id');
    if (!versions.includes(at))
      throw new GoogleApiError(
        'NOT_FOUND',
        `Model ${JSON.stringify(name)} has no version ${at} (versions: ${versions.join(', ') || 'none'}).`,
      );
  } else {
    const aliases = ids(spec.versionAliases, 'alias');
    if (!aliases.includes(at))
      throw new GoogleApiError(
        'NOT_FOUND',
        `Model ${JSON.stringify(name)} has no version alias "${at}" (aliases: ${aliases.join(', ') || 'none'}).`,
      );
  }
  return found;
}
