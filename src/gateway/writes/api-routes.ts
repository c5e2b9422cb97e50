/**
 * The REST side of the API methods (api-method.ts): one fastify route per path prefix Google's clients use
 * (`/v1/…`, and `/ui/…`, which the Node clients' REST fallback names first for operations), dispatching on the
 * methods' own http rules, so a method's paths are written once, as the proto writes them. Paths no rule matches
 * are answered as the gateway answers any unknown path (404 NOT_FOUND).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { userTextInMessage } from '../../api/common/text.js';
import { checkSystemParameters, GoogleApiError } from '../google-errors.js';
import {
  answerJson,
  compileRule,
  methodOf,
  normalised,
  restRequest,
  type ApiMethod,
  type CompiledRule,
} from './api-method.js';

const JSON_TYPE = 'application/json; charset=UTF-8';
const PREFIXES = ['/v1/*', '/ui/*'] as const;

interface Route {
  readonly method: ApiMethod;
  readonly compiled: CompiledRule;
}

function notFound(req: FastifyRequest): GoogleApiError {
  return new GoogleApiError(
    'NOT_FOUND',
    `The requested URL ${req.method} ${userTextInMessage(req.url.split('?')[0] ?? '')} was not found on this server.`,
  );
}

function decodedPath(url: string): string {
  const raw = url.split('?', 1)[0] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new GoogleApiError('INVALID_ARGUMENT', `the path ${userTextInMessage(raw)} is not percent-encoded UTF-8`);
  }
}

export function apiRoutes(methods: readonly ApiMethod[]): (app: FastifyInstance) => Promise<void> {
  const routes: Route[] = methods.flatMap((method) =>
    method.http.map((rule) => ({ method, compiled: compileRule(rule) })),
  );
  return async (app) => {
    // Google's REST clients send `content-type: application/json` with the empty body of a GET or DELETE.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      if (body === '') return done(null, undefined);
      try {
        done(null, JSON.parse(body as string));
      } catch (err) {
        done(
          new GoogleApiError('INVALID_ARGUMENT', `Invalid JSON payload received: ${(err as Error).message}`),
          undefined,
        );
      }
    });
    for (const url of PREFIXES)
      app.route({
        method: ['GET', 'POST', 'PATCH', 'DELETE'],
        url,
        // Google's Python REST transport sends `content-type: application/json` with an empty body on DELETE
        // (Endpoint.delete(), Model.delete()): no body, not bad JSON, which fastify's parser would refuse.
        onRequest: async (req) => {
          if (req.headers['content-length'] === '0') delete req.headers['content-type'];
        },
        handler: async (req, reply) => {
          const problem = checkSystemParameters(req.query);
          if (problem !== undefined) throw problem;
          const path = decodedPath(req.url);
          for (const { method, compiled } of routes) {
            if (compiled.rule.method !== req.method) continue;
            const m = compiled.pattern.exec(path);
            if (m === null) continue;
            const desc = methodOf(method);
            const query =
              typeof req.query === 'object' && req.query !== null ? (req.query as Record<string, unknown>) : {};
            const request = normalised(desc.input, restRequest(compiled, m.slice(1), req.body, query));
            const controller = new AbortController();
            // The response's close, not the request's: a request closes once its body is read.
            reply.raw.once('close', () => {
              if (!reply.raw.writableFinished) controller.abort();
            });
            const answer = await method.call(request, {
              authorization: req.headers.authorization,
              signal: controller.signal,
            });
            return reply.header('content-type', JSON_TYPE).send(JSON.stringify(answerJson(desc.output, answer)));
          }
          throw notFound(req);
        },
      });
  };
}
