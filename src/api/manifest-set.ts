import { fieldErrors, type FieldError } from './common/field-error.js';
import { isRecord, keyInPath } from './common/text.js';
import { PREDICTION_GROUP } from './prediction/v1/names.js';
import { parentServiceName } from './registry/names.js';

/**
 * A manifest set checked as a whole, for GitOps pipelines: references between objects that no
 * single-object rule can see. None of these is refused by the cluster (objects are applied in any
 * order, and the reconcilers report a missing reference as Ready=False until it appears), so
 * `validate` warns by default, refuses with --strict, and skips them for a partial set.
 */

/** Where a document is: its file and 1-based position in it (after expanding `kind: List`). */
export interface DocumentRef {
  readonly file: string;
  readonly document: number;
}

export interface SetMember extends DocumentRef {
  readonly object: unknown;
}

/** One cross-check finding, about `subject`; `other` is the document it clashes with, if any. */
export interface SetFinding {
  readonly subject: DocumentRef;
  readonly error: FieldError;
  readonly other?: DocumentRef;
}

interface Parsed extends DocumentRef {
  readonly kind: string;
  /** metadata.namespace, or '' for "the namespace the set is applied to". */
  readonly namespace: string;
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

const REGISTRY_GROUP = 'registry.endpoint-operator.dev';

function parse(m: SetMember): Parsed | undefined {
  const o = m.object;
  if (
    !isRecord(o) ||
    !isRecord(o.metadata) ||
    !isRecord(o.spec) ||
    typeof o.apiVersion !== 'string' ||
    typeof o.kind !== 'string'
  )
    return undefined;
  const group = o.apiVersion.split('/')[0];
  if (group !== PREDICTION_GROUP && group !== REGISTRY_GROUP) return undefined;
  const namespace = typeof o.metadata.namespace === 'string' ? o.metadata.namespace : '';
  const name = typeof o.metadata.name === 'string' ? o.metadata.name : '';
  return { file: m.file, document: m.document, kind: o.kind, namespace, name, spec: o.spec };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `file (document N)`, as the report names a place. */
export function where(ref: DocumentRef): string {
  return `${ref.file} (document ${ref.document})`;
}

function inNamespace(namespace: string): string {
  return namespace === '' ? 'in the namespace the set is applied to' : `in namespace ${JSON.stringify(namespace)}`;
}

function identify(p: Parsed): string {
  return `${p.kind} ${p.namespace === '' ? '' : `${p.namespace}/`}${p.name}`;
}

const PREFIX = 'manifest set: ';

/** Every cross-check finding over `members`, in document order of their subjects. */
export function checkManifestSet(members: readonly SetMember[]): SetFinding[] {
  const parsed = members.map(parse).filter((p): p is Parsed => p !== undefined);
  const of = (kind: string) => parsed.filter((p) => p.kind === kind);
  const endpoints = of('PredictionEndpoint');
  const models = of('DeployedModel');
  const services = of('RegistryService');
  const registryEndpoints = of('RegistryEndpoint');
  const findings: SetFinding[] = [];

  const endpointNames = new Set(endpoints.map((e) => `${e.namespace}\n${e.name}`));
  const modelIds = new Map<string, Parsed>();
  for (const m of models) {
    const ref = isRecord(m.spec.endpointRef) ? str(m.spec.endpointRef.name) : undefined;
    if (ref === undefined) continue;
    if (!endpointNames.has(`${m.namespace}\n${ref}`)) {
      findings.push({
        subject: m,
        error: fieldErrors.notFound(
          'spec.endpointRef.name',
          ref,
          `${PREFIX}names PredictionEndpoint ${JSON.stringify(ref)}, which is not in the set (${inNamespace(m.namespace)}); the model stays Ready=False (EndpointNotFound) until it exists`,
        ),
      });
    }
    const id = str(m.spec.id);
    if (id === undefined) continue;
    const key = `${m.namespace}\n${ref}\n${id}`;
    const first = modelIds.get(key);
    if (first === undefined) modelIds.set(key, m);
    else {
      findings.push({
        subject: m,
        other: first,
        error: fieldErrors.duplicate(
          'spec.id',
          id,
          `${PREFIX}${identify(first)} in ${where(first)} already deploys id ${JSON.stringify(id)} to endpoint ${JSON.stringify(ref)}; ids are unique within an endpoint (this one would be Ready=False, DuplicateId)`,
        ),
      });
    }
  }

  for (const e of endpoints) {
    if (!isRecord(e.spec.trafficSplit)) continue;
    for (const id of Object.keys(e.spec.trafficSplit)) {
      if (modelIds.has(`${e.namespace}\n${e.name}\n${id}`)) continue;
      findings.push({
        subject: e,
        error: fieldErrors.notFound(
          `spec.trafficSplit[${keyInPath(id)}]`,
          id,
          `${PREFIX}no DeployedModel in the set deploys id ${JSON.stringify(id)} to this endpoint (spec.endpointRef.name ${JSON.stringify(e.name)}, spec.id ${JSON.stringify(id)}, ${inNamespace(e.namespace)}); the endpoint stays Ready=False (TrafficSplitUnresolved) until one does`,
        ),
      });
    }
  }

  const serviceNames = new Map<string, Parsed>();
  for (const s of services) {
    const name = str(s.spec.name);
    if (name === undefined) continue;
    const key = `${s.namespace}\n${name}`;
    const first = serviceNames.get(key);
    if (first === undefined) serviceNames.set(key, s);
    else {
      findings.push({
        subject: s,
        other: first,
        error: fieldErrors.duplicate(
          'spec.name',
          name,
          `${PREFIX}${identify(first)} in ${where(first)} has the same spec.name ${inNamespace(s.namespace)}; one registry service is declared by one RegistryService`,
        ),
      });
    }
  }

  for (const r of registryEndpoints) {
    const name = str(r.spec.name);
    const parent = name === undefined ? undefined : parentServiceName(name);
    if (parent === undefined || serviceNames.has(`${r.namespace}\n${parent}`)) continue;
    findings.push({
      subject: r,
      error: fieldErrors.notFound(
        'spec.name',
        name,
        `${PREFIX}its parent RegistryService (spec.name ${JSON.stringify(parent)}) is not in the set (${inNamespace(r.namespace)}); the endpoint stays Ready=False (ParentNotFound) until it exists`,
      ),
    });
  }
  return findings;
}
