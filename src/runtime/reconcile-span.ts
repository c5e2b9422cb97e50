/**
 * A span per reconcile (kind, namespace/name, result), as controller-rs starts one around every
 * reconcile. Only `@opentelemetry/api`: with no SDK registered (src/runtime/telemetry.ts) the tracer
 * is the API's no-op and this costs a few allocations per reconcile.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { ATTR_K8S_NAMESPACE_NAME } from '@opentelemetry/semantic-conventions';

export const RECONCILE_ATTRIBUTES = {
  controller: 'endpoint_operator.controller',
  kind: 'endpoint_operator.kind',
  name: 'endpoint_operator.name',
  namespace: ATTR_K8S_NAMESPACE_NAME,
  result: 'endpoint_operator.reconcile.result',
} as const;

export type ReconcileOutcome = 'success' | 'requeue_after' | 'error';

export interface ReconcileSpan {
  end(result: ReconcileOutcome, error?: string): void;
}

const tracer = trace.getTracer('endpoint-operator-controller');

export function startReconcileSpan(
  controller: string,
  kind: string,
  namespace: string | undefined,
  name: string,
): ReconcileSpan {
  const span = tracer.startSpan(`reconcile ${kind}`, {
    attributes: {
      [RECONCILE_ATTRIBUTES.controller]: controller,
      [RECONCILE_ATTRIBUTES.kind]: kind,
      [RECONCILE_ATTRIBUTES.name]: name,
      ...(namespace !== undefined ? { [RECONCILE_ATTRIBUTES.namespace]: namespace } : {}),
    },
  });
  return {
    end(result, error) {
      span.setAttribute(RECONCILE_ATTRIBUTES.result, result);
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}
