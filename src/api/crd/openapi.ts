import { z } from 'zod';

/** A node of a CRD's structural OpenAPI v3 schema (apiextensions.k8s.io/v1 JSONSchemaProps, the parts we emit). */
export interface JSONSchemaProps {
  type?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  [key: string]: unknown;
}

/**
 * Converts a zod schema to a structural OpenAPI v3 schema as Kubernetes requires for CRDs
 * (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema).
 * zod's own `openapi-3.0` target does the heavy lifting; what follows removes what a structural
 * schema forbids and fails loudly on constructs it cannot express, so a bad schema is caught by
 * `npm test` rather than by a cluster refusing the CRD.
 */
export function toStructuralSchema(schema: z.ZodType, where: string): JSONSchemaProps {
  const raw = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
    cycles: 'throw',
    reused: 'inline',
  });
  return structural(raw as Record<string, unknown>, where);
}

const DROPPED_KEYS = new Set(['$schema', 'id', '$id', 'title', 'examples']);

/** The types of a zod union of an integer and a string: Kubernetes' IntOrString (a Service port, a percentage). */
function isIntOrString(node: Record<string, unknown>): boolean {
  const members = node.anyOf;
  if (!Array.isArray(members) || members.length !== 2) return false;
  const types = members
    .map((m) => (typeof m === 'object' && m !== null ? (m as Record<string, unknown>).type : undefined))
    .sort();
  return types[0] === 'integer' && types[1] === 'string';
}

function structural(node: Record<string, unknown>, where: string): JSONSchemaProps {
  if (isIntOrString(node)) {
    // A structural schema can say "integer or string" only this way; the branches' own bounds and
    // patterns cannot follow (the apiserver allows exactly `anyOf: [{type: integer}, {type: string}]`),
    // so they are enforced by the validator, in the webhook, the reconciler and `validate`.
    const { anyOf: _members, ...rest } = node;
    return structural({ ...rest, 'x-kubernetes-int-or-string': true }, where);
  }
  const out: JSONSchemaProps = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYS.has(key)) continue;
    if (key === 'anyOf' || key === 'oneOf' || key === 'allOf' || key === 'not' || key === '$ref') {
      throw new Error(
        `${where}: "${key}" cannot be expressed in a structural CRD schema; move this rule into the validator`,
      );
    }
    if (key === 'properties') {
      const props: Record<string, JSONSchemaProps> = {};
      const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
      for (const [name, child] of Object.entries(value as Record<string, Record<string, unknown>>)) {
        const prop = structural(child, `${where}.${name}`);
        props[name] = required.has(name) ? prop : emptyMeansUnset(prop);
      }
      // The apiserver stores an empty `properties` as absent (omitempty); writing it would differ from what is read back.
      if (Object.keys(props).length > 0) out.properties = props;
    } else if (key === 'items') {
      out.items = structural(value as Record<string, unknown>, `${where}[]`);
    } else if (key === 'additionalProperties') {
      // `additionalProperties: false` is zod's way of saying "an object": in a CRD unknown fields are
      // pruned instead, and Kubernetes forbids additionalProperties next to properties.
      if (typeof value === 'object' && value !== null)
        out.additionalProperties = structural(value as Record<string, unknown>, `${where}[*]`);
    } else if (
      (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) ||
      (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)
    ) {
      // zod's `.int()` means "a safe integer"; the apiserver's int64 is wider, so the bound adds only noise.
      continue;
    } else if (key === 'required') {
      if (Array.isArray(value) && value.length > 0) out.required = [...(value as string[])];
    } else {
      out[key] = value;
    }
  }
  if (
    out.type === undefined &&
    out['x-kubernetes-preserve-unknown-fields'] !== true &&
    out['x-kubernetes-int-or-string'] !== true
  ) {
    throw new Error(`${where}: every node of a structural schema needs a type`);
  }
  return out;
}

/**
 * An optional string field accepts `""`, which means unset (the seed: "string fields are empty
 * strings" when unset; the validators' side is common/unset.ts): its pattern applies only to a
 * non-empty value. A field with a minimum length keeps it (isEmptyUnset in common/schema-walk.ts). Done here, once, so every optional string field of every kind,
 * present and future, gets it.
 */
function emptyMeansUnset(prop: JSONSchemaProps): JSONSchemaProps {
  if (prop.type !== 'string') return prop;
  // A field declared with a minimum length (`.min(1)`) says that "" is not a value for it: left as is.
  if (typeof prop.minLength === 'number' && prop.minLength > 0) return prop;
  const out: JSONSchemaProps = { ...prop };
  if (typeof out.pattern === 'string' && !new RegExp(out.pattern, 'u').test('')) out.pattern = `^$|${out.pattern}`;
  return out;
}

/** All CEL rules in a schema, with the JSON path of the node they sit on (for offline CEL tests). */
export function celRules(schema: JSONSchemaProps, path = ''): { path: string; rule: string; message?: string }[] {
  const found: { path: string; rule: string; message?: string }[] = [];
  const rules = schema['x-kubernetes-validations'];
  if (Array.isArray(rules)) {
    for (const r of rules as { rule: string; message?: string }[])
      found.push({ path, rule: r.rule, ...(r.message === undefined ? {} : { message: r.message }) });
  }
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    found.push(...celRules(child, path === '' ? name : `${path}.${name}`));
  if (schema.items) found.push(...celRules(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object')
    found.push(...celRules(schema.additionalProperties, `${path}[*]`));
  return found;
}
