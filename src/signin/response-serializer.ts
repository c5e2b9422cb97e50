/**
 * How the sign-in API writes its answers: fastify's own way, fast-json-stringify compiled once per route from the
 * response DTO's JSON Schema. It also drops any field the DTO does not declare, so an internal field can never
 * leak into an answer. The type provider's default serializer instead parses every answer with zod before
 * JSON.stringify, which cost /auth/pos/me 40 % of its throughput (bench B5, bench/results.json).
 */
import fastJson from 'fast-json-stringify';
import { z } from 'zod';

type Serializer = (data: unknown) => string;

export const responseSerializer = (({ schema }: { schema: unknown }): Serializer => {
  const { $schema: _drop, ...jsonSchema } = z.toJSONSchema(schema as z.ZodType, {
    target: 'draft-7',
    io: 'output',
    reused: 'inline',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return fastJson(jsonSchema);
}) satisfies (route: { schema: unknown }) => Serializer;
