import type { KindDefinition } from './common/kind.js';
import { adminUserKind, shopKind, shopUserKind, signInSessionKind } from './pos/v1/index.js';
import { artifactBucketKind, deployedModelKind, modelKind, predictionEndpointKind } from './prediction/v1/index.js';
import { registryEndpointKind, registryServiceKind } from './registry/index.js';

/**
 * Every kind the operator serves. The CRD generator, the admission webhook, the validate CLI
 * and the controllers all start from this list, so a kind added here is covered everywhere.
 */
export const allKinds: readonly KindDefinition[] = [
  shopKind,
  shopUserKind,
  adminUserKind,
  signInSessionKind,
  predictionEndpointKind,
  deployedModelKind,
  modelKind,
  artifactBucketKind,
  registryServiceKind,
  registryEndpointKind,
];

export function findKind(
  apiVersion: string,
  kind: string,
): { def: KindDefinition; version: KindDefinition['versions'][number] } | undefined {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return undefined;
  const group = apiVersion.slice(0, slash);
  const versionName = apiVersion.slice(slash + 1);
  const def = allKinds.find((k) => k.group === group && k.kind === kind);
  const version = def?.versions.find((v) => v.name === versionName);
  return def && version ? { def, version } : undefined;
}
