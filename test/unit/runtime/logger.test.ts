import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, objectLogger } from '../../../src/runtime/logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _enc, cb) { chunks.push(chunk.toString()); cb(); } });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('logger', () => {
  it('writes one JSON line per event carrying controller, kind, namespace and name', () => {
    const { stream, lines } = capture();
    const root = createLogger({ level: 'info' }, stream);
    objectLogger(root.child({ controller: 'deployedmodel' }), { kind: 'DeployedModel', namespace: 'endpoint-demo', name: 'dm-1' }).info({ retries: 2 }, 'reconciled');
    const [line] = lines();
    expect(line).toMatchObject({ level: 'info', msg: 'reconciled', controller: 'deployedmodel', kind: 'DeployedModel', namespace: 'endpoint-demo', name: 'dm-1', retries: 2 });
    expect(typeof line?.time).toBe('string');
  });

  it('never writes a password or token value', () => {
    const { stream, lines } = capture();
    createLogger({ level: 'info' }, stream).info({ body: { password: 'hunter2' }, token: 'eyJ', headers: { authorization: 'Bearer x' } }, 'request');
    const text = JSON.stringify(lines());
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('eyJ');
    expect(text).not.toContain('Bearer x');
  });
});
