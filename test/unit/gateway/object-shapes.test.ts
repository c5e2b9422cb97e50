import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../support/object-shapes.ts', import.meta.url));

/** See test/support/object-shapes.ts: V8's own answer (natives syntax), in a process of its own. */
function shapesAt(ratio: string): { attemptHeaders: { newMaps: number; fast: boolean }; answers: { newMaps: number; fast: boolean } } {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', script, ratio], { encoding: 'utf8', timeout: 60_000 });
  // The console exporter may print sampled spans on stdout too: the figures are the line marked SHAPES.
  return JSON.parse(out.split('\n').find((l) => l.startsWith('SHAPES '))?.slice(7) ?? '{}');
}

describe('objects made on every gateway call keep one shape', () => {
  it.each(['0', '1'])('the model server request headers with trace context (sampler %s)', (ratio) => {
    const { attemptHeaders } = shapesAt(ratio);
    // A spread copy with a property added after it (`{ ...headers }` then traceparent) made a new map per call.
    expect(attemptHeaders).toEqual({ newMaps: 0, fast: true });
  }, 60_000);

  it('the model server answers', () => {
    const { answers } = shapesAt('0');
    // An object literal with a getter was a dictionary-mode object of its own per call.
    expect(answers).toEqual({ newMaps: 0, fast: true });
  }, 60_000);
});
