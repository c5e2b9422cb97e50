/**
 * Stage 3, the caller's budget (fairness.ts): a call is counted against its caller before its body is
 * read, so one caller's bursts or large bodies cannot take the gateway from the others. Over budget it
 * is refused 429; a refusal that will close its connection with a body on the way first waits for one
 * of the caller's calls to end (fairness.ts holdRefusal), so a client looping on 429 does not turn the
 * gateway's work into accepting connections. A client holding its body back until `100 Continue` costs no
 * body and is not held (rest-transport.ts says which bodies close).
 */
import type { Principal } from '../auth/gateway-auth.js';
import { fairnessKeyOf, type CallerLimiter } from '../fairness.js';
import type { PredictionCall } from './call.js';
import type { GatewaySettings } from '../settings.js';

export interface BudgetOptions {
  readonly callers: CallerLimiter;
  readonly settings: Pick<GatewaySettings, 'bodyLimitBytes' | 'largeBodyBytes'>;
}

/** The release of the call's share of its caller's budget (call it once the call is answered), or the 429 thrown. */
export async function takeBudget(
  options: BudgetOptions,
  call: Pick<PredictionCall, 'client' | 'body'>,
  principal: Principal,
): Promise<() => void> {
  const key = fairnessKeyOf(call.client, principal);
  const admission = options.callers.acquire(key, call.body.weight(options.settings.bodyLimitBytes));
  if (typeof admission === 'function') return admission;
  if (call.body.closesIfRefused(options.settings.largeBodyBytes)) await options.callers.holdRefusal(key);
  throw admission;
}
