/**
 * fastify's `application/json` body parser with the limits of json-guard.ts in front of it: the
 * nesting depth is checked on the raw bytes before JSON.parse, and ±Infinity after it. The parse
 * itself stays fastify's own (secure-json-parse: `__proto__` and `constructor.prototype` refused).
 */
import type { FastifyInstance } from 'fastify';
import { checkFiniteNumbers, JsonLimitError, scanJson } from './json-guard.js';

export interface JsonBodyParserOptions {
  /**
   * Refuse a `charset` other than UTF-8 (RFC 8259 §8.1: JSON exchanged between systems is UTF-8;
   * a UTF-16 or Latin-1 body would otherwise be decoded as UTF-8 and mangled silently).
   */
  readonly utf8Only?: boolean;
  /** The error thrown for a refused body; default an Error with that `statusCode`, for the scope's error handler. */
  readonly refuse?: (status: 400 | 415, message: string) => Error;
}

function defaultRefuse(status: 400 | 415, message: string): Error {
  return Object.assign(new Error(message), { statusCode: status });
}

/** The `charset` parameter of a media type, lower-cased; undefined when there is none. */
export function charsetOf(contentType: string): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType);
  return m?.[1]?.toLowerCase();
}

/** Replaces the scope's `application/json` parser (call inside the plugin whose routes it serves). */
export function installJsonBodyParser(app: FastifyInstance, options: JsonBodyParserOptions = {}): void {
  const refuse = options.refuse ?? defaultRefuse;
  const secureParse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const type = request.headers['content-type'] ?? '';
    const charset = charsetOf(type);
    if (options.utf8Only === true && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(
        refuse(415, `the body must be UTF-8 JSON; charset=${JSON.stringify(charset.slice(0, 40))} is not accepted`),
        undefined,
      );
      return;
    }
    let mayOverflow: boolean;
    try {
      mayOverflow = scanJson(body as Buffer).mayOverflow;
    } catch (err) {
      done(refuse(400, (err as Error).message), undefined);
      return;
    }
    secureParse(request, (body as Buffer).toString('utf8'), (err, value) => {
      if (err !== null) {
        done(err, undefined);
        return;
      }
      try {
        if (mayOverflow) checkFiniteNumbers(value);
      } catch (limit) {
        done(limit instanceof JsonLimitError ? refuse(400, limit.message) : (limit as Error), undefined);
        return;
      }
      done(null, value);
    });
  });
}
