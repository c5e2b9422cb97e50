import type { KindDefinition } from './common/kind.js';

/**
 * Every kind the operator serves. The CRD generator, the admission webhook, the validate CLI
 * and the controllers all start from this list, so a kind added here is covered everywhere.
 */
export const allKinds: readonly KindDefinition[] = [
];

export function findKind(apiVersion: string, kind: string): { def: KindDefinition; version: KindDefinition['versions'][number] } | undefined {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return undefined;
  const group = apiVersion.slice(0, slash);
  const versionName = apiVersion.slice(slash + 1);
  const def = allKinds.find((k) => k.group === group && k.kind === kind);
  const version = def?.versions.find((v) => v.name === versionName);
  return def && version ? { def, version } : undefined;
}
