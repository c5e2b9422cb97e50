/**
 * Stage 3, the caller's budget (fairness.ts): a call is counted against its caller before its body is
 * read, so one caller's bursts or large bodies cannot take the gateway from the others. Over budget it
 * is refused 429; a refusal that will close its connection with a body on the way first waits for one
 * of the caller's calls to end (fairness.ts holdRefusal), so a client looping on 429 does not turn the
 * gateway's work into accepting connections.
 */
import type { IncomingMessage } from 'node:http';
import { closesRatherThanReads } from '../../http/unread-body.js';
import type { Principal } from '../auth/gateway-auth.js';
import { bodyWeight, fairnessKeyOf, type CallerLimiter } from '../fairness.js';

export interface BudgetOptions {
  readonly callers: CallerLimiter;
  readonly bodyLimit: number;
  readonly largeBodyBytes: number;
}

/**
 * The release of the call's share of its caller's budget (call it once the call is answered), or the
 * 429 thrown. `awaitingContinue`: the client holds its body back until `100 Continue`; such a refusal
 * costs no body and is not held (curl sends the body anyway after waiting 1 s for an answer).
 */
export async function takeBudget(
  options: BudgetOptions,
  req: IncomingMessage,
  principal: Principal,
  awaitingContinue: boolean,
): Promise<() => void> {
  const key = fairnessKeyOf(req, principal);
  const admission = options.callers.acquire(key, bodyWeight(req, options.bodyLimit));
  if (typeof admission === 'function') return admission;
  if (
    !awaitingContinue &&
    closesRatherThanReads(
      { headers: req.headers, complete: req.complete, awaitingContinue: false },
      options.largeBodyBytes,
    )
  ) {
    await options.callers.holdRefusal(key);
  }
  throw admission;
}
