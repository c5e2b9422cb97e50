/**
 * Whether a refusal from the apiserver (its schema and CEL rules, or the admission webhook) names the field an
 * invalid example's `# expect-field:` header gives in the validators' spelling (`spec.labels[team]`,
 * `spec.memberships[1].shop`).
 */

/** The apiserver writes map entries as `.key`, and list indexes only where a rule sits on the item. */
function apiserverSpellings(path: string): string[] {
  return [path, path.replace(/\[([^\]]*)\]/g, '.$1'), path.replace(/\[\d+\]/g, '').replace(/\[([^\]]*)\]/g, '.$1')];
}

/**
 * Two rules are reported one level up, as Kubernetes reports them: a map-key rule names the map (a CEL
 * message quoting a key is priced beyond the apiserver's budget, src/api/crd/cel.ts), and a repeated key of
 * a list-map names the item, with the key's value.
 */
export function namesField(answer: string, field: string): boolean {
  if (apiserverSpellings(field).some((f) => answer.includes(f))) return true;
  const mapKey = /^(.*)\[([^\]]*[^\]\d][^\]]*)\]$/.exec(field);
  // Kubernetes before 1.36 writes the map's value as "object" before the message.
  if (
    mapKey !== null &&
    [': Invalid value: ', ': Invalid value: "object": '].some((v) =>
      answer.includes(`${mapKey[1] ?? ''}${v}every key must be valid`),
    )
  )
    return true;
  const listMapKey = /^(.*\[\d+\])\.(\w+)$/.exec(field);
  return listMapKey !== null && answer.includes(`${listMapKey[1] ?? ''}: Duplicate value: {"${listMapKey[2] ?? ''}":`);
}
