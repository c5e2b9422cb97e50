import { describe, expect, it } from 'vitest';
import { createLogger, objectLogger } from '../../../src/base/logger.js';
import { capture } from '../../support/log-lines.js';

describe('logger', () => {
  it('writes one JSON line per event carrying controller, kind, namespace and name', () => {
    const { stream, lines } = capture();
    const root = createLogger({ level: 'info' }, stream);
    objectLogger(root.child({ controller: 'deployedmodel' }), {
      kind: 'DeployedModel',
      namespace: 'endpoint-demo',
      name: 'dm-1',
    }).info({ retries: 2 }, 'reconciled');
    const [line] = lines();
    expect(line).toMatchObject({
      level: 'info',
      msg: 'reconciled',
      controller: 'deployedmodel',
      kind: 'DeployedModel',
      namespace: 'endpoint-demo',
      name: 'dm-1',
      retries: 2,
    });
    expect(typeof line?.time).toBe('string');
  });

  it('never writes a password or token value', () => {
    const { stream, lines } = capture();
    createLogger({ level: 'info' }, stream).info(
      { body: { password: 'hunter2' }, token: 'eyJ', headers: { authorization: 'Bearer x' } },
      'request',
    );
    const text = JSON.stringify(lines());
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('eyJ');
    expect(text).not.toContain('Bearer x');
  });
});
