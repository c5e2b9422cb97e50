/**
 * A model server's own cause reaches the caller: a Python traceback (MLServer's 500 answer to a call it could
 * not compute) is quoted by its last lines, the exception, not by its preamble.
 */
import { describe, expect, it } from 'vitest';
import { answerError, QUOTE_LIMIT_BYTES, tracebackCause } from '../../../../src/gateway/prediction/errors.js';
import type { ResolvedModel } from '../../../../src/gateway/routing-table.js';
import type { UpstreamResponse } from '../../../../src/gateway/upstream.js';

const model: ResolvedModel = {
  id: '42',
  namespace: 'ns',
  deployedModelName: 'iris-v1',
  model: 'm',
  modelVersionId: undefined,
  modelDisplayName: 'm',
  backend: undefined,
  unusable: undefined,
};

function res(status: number, body: string): UpstreamResponse {
  const bytes = Buffer.from(body);
  return {
    status,
    headers: {},
    pieces: [bytes],
    size: bytes.length,
    target: { origin: 'http://10.0.0.1:8080', basePath: '' },
    retried: false,
  };
}

// The shape of MLServer 1.7's answer (Python 3.11: `^^^` markers under the failing expression), frames many
// enough that the cause lies past the first 512 bytes.
const frames = Array.from(
  { length: 8 },
  (_, i) =>
    `  File "/opt/python/mlserver/handlers/dataplane.py", line ${100 + i}, in infer\n    prediction = await model.predict(payload)\n                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n`,
).join('');
const CAUSE = 'ValueError: X has 2 features, but LogisticRegression is expecting 4 features as input.';
const MLSERVER_TRACEBACK = `Traceback (most recent call last):\n${frames}${CAUSE}\n\n`;

describe('tracebackCause', () => {
  it('is the exception line after the last frame', () => {
    expect(MLSERVER_TRACEBACK.indexOf(CAUSE)).toBeGreaterThan(QUOTE_LIMIT_BYTES);
    expect(tracebackCause(MLSERVER_TRACEBACK)).toBe(CAUSE);
  });

  it('keeps a multi-line message, and reads the last of chained tracebacks', () => {
    const chained =
      'Traceback (most recent call last):\n  File "a.py", line 1, in f\n    g()\nKeyError: 1\n\n' +
      'During handling of the above exception, another exception occurred:\n\n' +
      'Traceback (most recent call last):\n  File "b.py", line 2, in h\n    raise RuntimeError(m)\n' +
      'RuntimeError: cannot load\nthe model file is truncated\n';
    expect(tracebackCause(chained)).toBe('RuntimeError: cannot load\nthe model file is truncated');
  });

  it('is undefined for text that is no traceback, or a traceback cut before its cause', () => {
    expect(tracebackCause('upstream connect error')).toBeUndefined();
    expect(
      tracebackCause('Traceback (most recent call last):\n  File "a.py", line 1, in f\n    g()\n'),
    ).toBeUndefined();
  });
});

describe('answerError', () => {
  it('quotes a plain-text traceback by its cause', () => {
    const err = answerError(model, res(500, MLSERVER_TRACEBACK));
    expect(err.body().error).toEqual({
      code: 502,
      status: 'INTERNAL',
      message: `Deployed model 42 (iris-v1): the model server at http://10.0.0.1:8080 answered 500: ${CAUSE}`,
    });
  });

  it('quotes a traceback inside a JSON error by its cause', () => {
    const err = answerError(model, res(500, JSON.stringify({ error: MLSERVER_TRACEBACK })));
    expect(err.message).toMatch(new RegExp(`answered 500: ${CAUSE.replace(/\./g, '\\.')}$`));
  });

  it('bounds what it quotes: a long cause or a long text is cut at QUOTE_LIMIT_BYTES, whole characters, marked', () => {
    const long = `Traceback (most recent call last):\n  File "a.py", line 1, in f\n    g()\nValueError: ${'é'.repeat(600)}\n`;
    const quoted = answerError(model, res(500, long)).message.split('answered 500: ')[1] ?? '';
    expect(quoted.endsWith('é…')).toBe(true);
    expect(Buffer.byteLength(quoted.slice(0, -1))).toBeLessThanOrEqual(QUOTE_LIMIT_BYTES);
    expect(quoted.startsWith('ValueError: éé')).toBe(true);

    const html = `<html>${'x'.repeat(2000)}</html>`;
    expect(answerError(model, res(502, html)).message).toMatch(/answered 502: <html>x+…$/);
  });
});
