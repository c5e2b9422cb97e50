/**
 * A method of Google's API served here, declared once and served over both transports: its implementation takes
 * the request as proto3 JSON (what REST sends, and what a gRPC message turns into) and answers the response's
 * JSON; REST reaches it through the method's own http rules (Google's path templates, copied from the proto's
 * `google.api.http` options: `GET /v1/{name=projects/*\/locations/*\/models/*}`), gRPC through its descriptor
 * (../grpc/api-methods.ts). Both transports normalise the request through the method's input message, so a
 * field reads the same whichever way it came.
 */
import type { DescMessage, DescService, JsonValue } from '@bufbuild/protobuf';
import { isRecord } from '../../api/common/kube-object.js';
import { GoogleApiError } from '../google-errors.js';
import { messageFromJson, messageToJson } from '../grpc/services.js';

export interface CallMeta {
  /** The Authorization header (REST) or metadata (gRPC). */
  readonly authorization: string | undefined;
  /** Aborted when the caller goes away or its deadline passes. */
  readonly signal: AbortSignal;
}

/** One of the method's http rules: `body` is '*' (the whole request), a field name, or absent (query parameters). */
export interface HttpRule {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly body?: string;
}

export interface ApiMethod {
  readonly service: DescService;
  /** The rpc's name in the service, e.g. UploadModel. */
  readonly name: string;
  readonly http: readonly HttpRule[];
  readonly call: (request: Record<string, unknown>, meta: CallMeta) => Promise<unknown>;
}

export function methodOf(method: ApiMethod) {
  const found = method.service.methods.find((m) => m.name === method.name);
  if (found === undefined || found.methodKind !== 'unary')
    throw new Error(`${method.service.typeName} has no unary ${method.name}`);
  return found;
}

/** A request's JSON as its message reads it: types checked, unknown fields dropped, defaults left out. */
export function normalised(schema: DescMessage, json: unknown): Record<string, unknown> {
  let message;
  try {
    message = messageFromJson(schema, json as JsonValue);
  } catch (err) {
    throw new GoogleApiError('INVALID_ARGUMENT', `Invalid request: ${(err as Error).message}`);
  }
  return messageToJson(schema, message) as Record<string, unknown>;
}

/** The response's JSON as its message writes it (so REST answers exactly what gRPC does). */
export function answerJson(schema: DescMessage, value: unknown): JsonValue {
  return messageToJson(schema, messageFromJson(schema, JSON.parse(JSON.stringify(value ?? {})) as JsonValue));
}

/** A compiled http rule: the path's regular expression and the request field each capture fills. */
export interface CompiledRule {
  readonly rule: HttpRule;
  readonly pattern: RegExp;
  readonly fields: readonly string[];
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function segmentPattern(pattern: string): string {
  return pattern
    .split('/')
    .map((p) => (p === '**' ? '.+' : p === '*' ? '[^/:]+' : escape(p)))
    .join('/');
}

/** Google's path template (`/v1/{parent=projects/*\/locations/*}/models:upload`) as a matcher. */
export function compileRule(rule: HttpRule): CompiledRule {
  const fields: string[] = [];
  let source = '';
  let rest = rule.path;
  while (rest !== '') {
    const open = rest.indexOf('{');
    if (open < 0) {
      source += escape(rest);
      break;
    }
    source += escape(rest.slice(0, open));
    const close = rest.indexOf('}', open);
    const [field = '', pattern = '*'] = rest.slice(open + 1, close).split('=');
    fields.push(field);
    source += `(${segmentPattern(pattern)})`;
    rest = rest.slice(close + 1);
  }
  return { rule, pattern: new RegExp(`^${source}$`), fields };
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let at = target;
  for (const p of parts.slice(0, -1)) {
    const next = at[p];
    at = isRecord(next) ? next : (at[p] = {});
  }
  at[parts[parts.length - 1] ?? ''] = value;
}

/** Google's system parameters: never request fields. */
const SYSTEM_PARAMETERS = new Set(['alt', '$alt', 'fields', '$fields', 'prettyPrint', 'key', 'quotaUser', '$callback']);

/** The request a REST call makes: path captures, then the body (per the rule), then query parameters. */
export function restRequest(
  compiled: CompiledRule,
  captures: readonly string[],
  body: unknown,
  query: Record<string, unknown>,
): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  const { rule } = compiled;
  if (rule.body === '*' && isRecord(body)) Object.assign(request, body);
  else if (rule.body !== undefined && rule.body !== '*' && body !== undefined) setPath(request, rule.body, body);
  if (rule.body !== '*')
    for (const [key, value] of Object.entries(query)) {
      if (SYSTEM_PARAMETERS.has(key)) continue;
      setPath(request, key, Array.isArray(value) && value.length === 1 ? value[0] : value);
    }
  compiled.fields.forEach((field, i) => setPath(request, field, captures[i] ?? ''));
  return request;
}
