/**
 * Service Directory's lookup semantics over a cached registry, as pure functions: ResolveService
 * (`maxEndpoints` clamped as Service Directory does, `endpointFilter`), GetService and ListEndpoints
 * (`filter`, `pageSize`, `pageToken`), answering in the REST JSON shapes of servicedirectory/v1
 * (proto3 JSON: fields at their default value are left out, as Google's front ends do).
 */
import { renderValue } from '../../api/common/field-error.js';
import { GoogleApiError } from '../google-errors.js';
import { checkPageRequest, pageOf } from '../paging.js';
import { compileFilter, FilterSyntaxError, type CompiledFilter, type FilterableEndpoint } from './filter.js';

/** One Ready endpoint of a service, with its effective annotations. */
export interface LookupEndpoint extends FilterableEndpoint {
  /** `projects/{project}/locations/{location}/networks/{network}`, or '' (v1beta1-only field). */
  readonly network: string;
  /** The RegistryEndpoint's metadata.uid (a UUID, as Service Directory's uid is). */
  readonly uid: string;
}

/** A resolvable service: the owner of its name, with its Ready endpoints sorted by name. */
export interface LookupService {
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly uid: string;
  readonly endpoints: readonly LookupEndpoint[];
}

/** What the lookup routes read: an informer-backed view of the registry (see cache.ts). */
export interface RegistryLookupSource {
  /** The service that owns `name`, or undefined when no Ready RegistryService claims it. */
  service(name: string): LookupService | undefined;
}

export interface EndpointJson {
  name: string;
  address?: string;
  port?: number;
  annotations?: Record<string, string>;
  network?: string;
  uid?: string;
}

export interface ServiceJson {
  name: string;
  annotations?: Record<string, string>;
  endpoints?: EndpointJson[];
  uid?: string;
}

export const DEFAULT_MAX_ENDPOINTS = 25;
export const MAX_MAX_ENDPOINTS = 100;
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../paging.js';

/** Service Directory: default 25, at most 100; a value below 1 means the default, above 100 the maximum. */
export function clampMaxEndpoints(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested) || requested < 1) return DEFAULT_MAX_ENDPOINTS;
  return Math.min(Math.floor(requested), MAX_MAX_ENDPOINTS);
}

// Endpoints are immutable views (the cache builds a new one per object version), so their JSON form is built once.
const endpointJsonMemo = new WeakMap<LookupEndpoint, EndpointJson>();

/** The endpoint's REST form; shared between answers, so callers must not modify it. */
export function endpointJson(e: LookupEndpoint): EndpointJson {
  const known = endpointJsonMemo.get(e);
  if (known !== undefined) return known;
  const out: EndpointJson = { name: e.name };
  if (e.address !== '') out.address = e.address;
  if (e.port !== 0) out.port = e.port;
  if (Object.keys(e.annotations).length > 0) out.annotations = { ...e.annotations };
  if (e.network !== '') out.network = e.network;
  if (e.uid !== '') out.uid = e.uid;
  endpointJsonMemo.set(e, out);
  return out;
}

export function serviceJson(s: LookupService, endpoints?: readonly LookupEndpoint[]): ServiceJson {
  const out: ServiceJson = { name: s.name };
  if (Object.keys(s.annotations).length > 0) out.annotations = { ...s.annotations };
  if (endpoints !== undefined && endpoints.length > 0) out.endpoints = endpoints.map(endpointJson);
  if (s.uid !== '') out.uid = s.uid;
  return out;
}

/** Clients send the same few filters again and again: compiled ones are kept (a bounded map, oldest out first). */
const compiledFilters = new Map<string, CompiledFilter>();
const MAX_COMPILED_FILTERS = 256;

/** Compiles a filter from a request field, turning a syntax error into INVALID_ARGUMENT that names the field and the position. */
export function parseFilterField(field: string, text: string | undefined): CompiledFilter {
  const key = text ?? '';
  const known = compiledFilters.get(key);
  if (known !== undefined) return known;
  try {
    const compiled = compileFilter(key);
    if (compiledFilters.size >= MAX_COMPILED_FILTERS)
      compiledFilters.delete(compiledFilters.keys().next().value as string);
    compiledFilters.set(key, compiled);
    return compiled;
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw new GoogleApiError('INVALID_ARGUMENT', `${field}: ${err.message}`);
    throw err;
  }
}

export function notFound(name: string): GoogleApiError {
  return new GoogleApiError('NOT_FOUND', `Service ${renderValue(name)} not found`);
}

export interface ResolveRequest {
  readonly maxEndpoints?: number;
  readonly endpointFilter?: string;
}

function pick(
  source: RegistryLookupSource,
  name: string,
  req: ResolveRequest,
): { service: LookupService; picked: LookupEndpoint[] } {
  const filter = parseFilterField('endpointFilter', req.endpointFilter);
  const service = source.service(name);
  if (service === undefined) throw notFound(name);
  const max = clampMaxEndpoints(req.maxEndpoints);
  const picked: LookupEndpoint[] = [];
  for (const e of service.endpoints) {
    if (picked.length >= max) break;
    if (filter.matches(e)) picked.push(e);
  }
  return { service, picked };
}

/** ResolveService: the first `maxEndpoints` endpoints (by name) that pass the filter. */
export function resolveService(
  source: RegistryLookupSource,
  name: string,
  req: ResolveRequest,
): { service: ServiceJson } {
  const { service, picked } = pick(source, name, req);
  return { service: serviceJson(service, picked) };
}

const endpointTextMemo = new WeakMap<LookupEndpoint, string>();

/**
 * resolveService's answer already serialised, the same text as JSON.stringify of it: the gateway's hot path.
 * Each endpoint's JSON is built once per object version and the answer is joined from those pieces, which
 * makes a resolve cost a filter pass instead of serialising every endpoint again (most of the time otherwise).
 */
export function resolveServiceText(source: RegistryLookupSource, name: string, req: ResolveRequest): string {
  const { service, picked } = pick(source, name, req);
  const head = serviceJson(service);
  const parts: string[] = [];
  for (const e of picked) {
    let text = endpointTextMemo.get(e);
    if (text === undefined) endpointTextMemo.set(e, (text = JSON.stringify(endpointJson(e))));
    parts.push(text);
  }
  let out = `{"service":{"name":${JSON.stringify(head.name)}`;
  if (head.annotations !== undefined) out += `,"annotations":${JSON.stringify(head.annotations)}`;
  if (parts.length > 0) out += `,"endpoints":[${parts.join(',')}]`;
  if (head.uid !== undefined) out += `,"uid":${JSON.stringify(head.uid)}`;
  return `${out}}}`;
}

export interface ListEndpointsRequest {
  readonly filter?: string;
  readonly pageSize?: number;
  readonly pageToken?: string;
}

/** ListEndpoints of one service: pages in name order; `nextPageToken` only when more remain. */
export function listEndpoints(
  source: RegistryLookupSource,
  name: string,
  req: ListEndpointsRequest,
): { endpoints?: EndpointJson[]; nextPageToken?: string } {
  const filterText = req.filter ?? '';
  const filter = parseFilterField('filter', filterText);
  const request = { filter: filterText, pageSize: req.pageSize, pageToken: req.pageToken };
  checkPageRequest(request);
  const service = source.service(name);
  if (service === undefined) throw notFound(name);
  const { page, nextPageToken } = pageOf(
    service.endpoints,
    (e) => e.name,
    (e) => filter.matches(e),
    request,
  );
  const out: { endpoints?: EndpointJson[]; nextPageToken?: string } = {};
  if (page.length > 0) out.endpoints = page.map(endpointJson);
  if (nextPageToken !== undefined) out.nextPageToken = nextPageToken;
  return out;
}

/** GetService: the service without its endpoints (Service Directory returns those only from ResolveService). */
export function getService(source: RegistryLookupSource, name: string): ServiceJson {
  const service = source.service(name);
  if (service === undefined) throw notFound(name);
  return serviceJson(service);
}
