/**
 * The one status write of a reconcile, and the Event that goes with a transition. The status is
 * recomputed from the object the writer hands over (after a 409 Conflict that is a fresh read),
 * pruned to what the API server stores, and sent only when it differs.
 */
import type { KubeObject } from '../api/common/kube-object.js';
import { asStored, type ReconcilerContext } from './context.js';
import { kindBindings, type ReconciledKind } from '../api/kind-bindings.js';
import { isConflict, isNotFound } from '../kube/api-error.js';
import { Reasons as Reason } from '../api/common/conditions.js';
import { isTerminal, TerminalError, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import {
  conditionsOf,
  isRecord,
  readyConditionOf,
  statusTime,
  withReadyCondition,
  type ReadyVerdict,
} from './status-common.js';

export interface StatusComputation {
  readonly status: unknown;
  readonly verdict: ReadyVerdict;
}

/**
 * Writes `computed`, the status the reconcile computed from `obj` (computed once per reconcile and
 * also used for its decisions); `compute` recomputes it only from a fresh read after a 409.
 */
export async function writeStatus(
  ctx: ReconcilerContext,
  which: ReconciledKind,
  obj: KubeObject,
  computed: StatusComputation,
  compute: (current: KubeObject) => StatusComputation,
  signal?: AbortSignal,
): Promise<{ written: boolean; object: KubeObject | undefined }> {
  const before = readyConditionOf(obj.status);
  let last: ReadyVerdict | undefined;
  const result = await ctx.statusWriters[which].update(
    obj,
    (current) => {
      const { status, verdict } = current === obj ? computed : compute(current);
      last = verdict;
      return asStored(kindBindings[which].def, status);
    },
    signal,
  );
  if (result.written) ctx.ownWrites.replaced(obj, result.object);
  // The first Ready=True of a new object is what every object does, not news: an Event for it
  // would double the API writes of a large sync. Every other transition is recorded.
  const firstSuccess = before === undefined && last?.status === 'True';
  if (
    result.written &&
    last !== undefined &&
    !firstSuccess &&
    (before?.status !== last.status || before.reason !== last.reason)
  ) {
    // Events are best-effort (the recorder never throws); not awaited so a slow events API cannot slow reconciles.
    void ctx.events.record(obj, last.status === 'False' ? 'Warning' : 'Normal', last.reason, last.message);
  }
  return result;
}

/**
 * Wraps a reconcile so that an unexpected failure (the API refused a write, a timeout) is also
 * reported where users look before it goes to the controller. A retryable one is `Ready=Unknown`,
 * reason `ReconcileError`, and the controller backs off; a terminal one (403 Forbidden, 422
 * Invalid: retrying repeats the refusal) is `Ready=False`, reason `RequestRejected`, and is
 * rethrown as a `TerminalError` that the controller does not retry. Conflicts and vanished
 * objects are routine and not reported. The report is best-effort: when the API is down it fails
 * too, and the retry is what matters.
 */
export function withErrorReporting(
  ctx: ReconcilerContext,
  which: ReconciledKind,
  reconcile: (req: ReconcileRequest) => Promise<ReconcileResult>,
): (req: ReconcileRequest) => Promise<ReconcileResult> {
  return async (req) => {
    try {
      return await reconcile(req);
    } catch (err) {
      const terminal = isTerminal(err);
      const obj = ctx.informers[which].get(req.namespace, req.name);
      if (obj !== undefined && !isConflict(err) && !isNotFound(err) && !req.signal.aborted) {
        const detail = err instanceof Error ? err.message : String(err);
        const verdict: ReadyVerdict = terminal
          ? {
              status: 'False',
              reason: Reason.RequestRejected,
              message: `the API server refused a request; not retried until the object changes: ${detail}`.slice(
                0,
                1024,
              ),
            }
          : {
              status: 'Unknown',
              reason: Reason.ReconcileError,
              message: `reconcile failed, retrying with backoff: ${detail}`.slice(0, 1024),
            };
        try {
          await ctx.statusWriters[which].update(
            obj,
            (current) => {
              const previous = isRecord(current.status) ? current.status : {};
              const conditions = withReadyCondition(
                conditionsOf(previous),
                verdict,
                current.metadata.generation,
                statusTime(ctx.clock),
              );
              // A refusal is a conclusion about this generation (kstatus reads Stalled only once the generation
              // is observed); a retryable error is not, and the kinds' updateTime keys off observedGeneration.
              const observed =
                terminal && current.metadata.generation !== undefined
                  ? { observedGeneration: current.metadata.generation }
                  : {};
              return asStored(kindBindings[which].def, { ...previous, ...observed, conditions });
            },
            req.signal,
          );
        } catch (reportErr) {
          req.log.debug(
            { err: reportErr instanceof Error ? reportErr.message : String(reportErr) },
            'could not report the failure in status',
          );
        }
      }
      throw terminal && !(err instanceof TerminalError) ? new TerminalError(err) : err;
    }
  };
}
