/**
 * Vertex's ListEndpoints (and ListModels: `model="id"`) `filter`, its simple forms: terms joined by `AND`, each one of
 *
 *   endpoint="id" | endpoint!="id"              the endpoint id (the last segment of its name)
 *   display_name="text" | display_name!="text"
 *   labels.key="value" | labels.key!="value"    a label's value
 *   labels.key:* | labels:key                    a label is present
 *
 * Values may be quoted ("..." with \" and \\ escapes) or bare. Anything else is refused INVALID_ARGUMENT, naming
 * the term, rather than answered as if it matched everything.
 */
import { renderValue } from '../../api/common/field-error.js';
import { GoogleApiError } from '../google-errors.js';
import type { VertexEndpoint } from './vertex-endpoint.js';

/** What a filter reads of a listed resource (Vertex's Endpoint, Model). */
export interface Filterable {
  readonly name: string;
  readonly displayName: string;
  readonly labels?: Record<string, string> | undefined;
}

export type ResourceFilter<T extends Filterable> = (resource: T) => boolean;
export type EndpointFilter = ResourceFilter<VertexEndpoint>;

const VALUE = String.raw`("(?:[^"\\]|\\.)*"|[^\s"]+)`;
const COMPARISON = new RegExp(
  String.raw`^(endpoint|model|display_name|labels\.([A-Za-z0-9_\-\p{Ll}\p{Lo}]+))\s*(!=|=)\s*${VALUE}$`,
  'u',
);
const PRESENCE = /^(?:labels\.([^\s:=]+):\*|labels:([^\s:=]+))$/u;

function unquote(text: string): string {
  return text.startsWith('"') ? text.slice(1, -1).replace(/\\(.)/g, '$1') : text;
}

function term(text: string, idField: 'endpoint' | 'model'): ResourceFilter<Filterable> {
  const presence = PRESENCE.exec(text);
  if (presence !== null) {
    const key = presence[1] ?? presence[2] ?? '';
    return (e) => e.labels?.[key] !== undefined;
  }
  const m = COMPARISON.exec(text);
  if (m === null || (m[1] !== idField && (m[1] === 'endpoint' || m[1] === 'model')))
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `filter: the term ${renderValue(text)} is not supported; use ${idField}="id", display_name="text", labels.key="value" or labels.key:*, joined by AND`,
    );
  const [, field = '', labelKey, op, raw = ''] = m;
  const want = unquote(raw);
  const read =
    field === idField
      ? (e: Filterable) => e.name.slice(e.name.lastIndexOf('/') + 1)
      : field === 'display_name'
        ? (e: Filterable) => e.displayName
        : (e: Filterable) => e.labels?.[labelKey ?? ''];
  return op === '=' ? (e) => read(e) === want : (e) => read(e) !== want;
}

/** A list's filter over resources whose id field is `idField` (ListEndpoints: endpoint, ListModels: model). */
export function compileResourceFilter(text: string, idField: 'endpoint' | 'model'): ResourceFilter<Filterable> {
  const trimmed = text.trim();
  if (trimmed === '') return () => true;
  const terms = trimmed.split(/\s+AND\s+/).map((t) => term(t, idField));
  return (e) => terms.every((t) => t(e));
}

export function compileEndpointFilter(text: string): EndpointFilter {
  return compileResourceFilter(text, 'endpoint');
}
