import { describe, expect, it } from 'vitest';
import { CallerWatch, callerOfSignal, type Caller } from '../../../src/gateway/caller.js';

/** Each implementation of Caller, made fresh, with the way its transport makes the caller leave. */
const kinds: [string, () => { caller: Caller; leave: (reason: unknown) => void }][] = [
  [
    'CallerWatch',
    () => {
      const caller = new CallerWatch();
      return { caller, leave: (reason) => caller.leave(reason) };
    },
  ],
  [
    'callerOfSignal',
    () => {
      const controller = new AbortController();
      return { caller: callerOfSignal(controller.signal), leave: (reason) => controller.abort(reason) };
    },
  ],
];

describe.each(kinds)('%s', (_name, make) => {
  it('is there until it leaves; then gone, with its reason', () => {
    const { caller, leave } = make();
    expect([caller.gone, caller.reason]).toEqual([false, undefined]);
    const reason = new Error('the client closed the connection');
    leave(reason);
    expect([caller.gone, caller.reason]).toEqual([true, reason]);
  });

  it('tells each listener once when it leaves, and not one that stopped listening', () => {
    const { caller, leave } = make();
    const heard: string[] = [];
    caller.whenGone(() => heard.push('a'));
    const unlisten = caller.whenGone(() => heard.push('b'));
    caller.whenGone(() => heard.push('c'));
    unlisten();
    leave('first');
    leave('second');
    expect(heard).toEqual(['a', 'c']);
    expect(caller.reason).toBe('first');
  });

  it('tells a listener added after it left at once', () => {
    const { caller, leave } = make();
    leave('gone');
    let heard = 0;
    caller.whenGone(() => heard++)();
    expect(heard).toBe(1);
  });

  it('gives a signal aborted with the reason, whether asked for before or after it left', () => {
    const before = make();
    const early = before.caller.signal;
    expect(early.aborted).toBe(false);
    before.leave('went');
    expect([early.aborted, early.reason]).toEqual([true, 'went']);
    const after = make();
    after.leave('went too');
    expect([after.caller.signal.aborted, after.caller.signal.reason]).toEqual([true, 'went too']);
  });
});

describe('CallerWatch', () => {
  it('makes no signal unless one is asked for, and the same one each time', () => {
    const caller = new CallerWatch();
    caller.leave('went');
    expect(caller.signal).toBe(caller.signal);
  });
});
