/**
 * The rules of a DeployedModel's serving fields (`spec.containerSpec`, `spec.artifactUri`,
 * `dedicatedResources.machineSpec`, `requiredReplicaCount`) that the schema's types and patterns
 * do not carry. The CRD's CEL rules say the same (deployed-model-schema.ts, container-spec.ts). Pure.
 */
import { fieldErrors, type FieldError } from '../../common/field-error.js';
import { FieldPath } from '../../common/field-path.js';
import { isRecord } from '../../common/text.js';
import {
  AUTOSCALING_METRICS,
  durationSeconds,
  MAX_DEPLOYMENT_TIMEOUT_SECONDS,
  type ContainerSpec,
  type Probe,
} from './container-spec.js';
import { NEW_VERSION_ADVICE, type DeployedModelSpec } from './deployed-model-schema.js';
import { canonicalJson } from './etag.js';

const spec = FieldPath.root('spec');

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** Rules on the new object alone. `raw` is the spec as written, `value` what of it decoded. */
export function servingErrors(raw: Record<string, unknown>, value: Partial<DeployedModelSpec>): FieldError[] {
  const errors: FieldError[] = [];
  if (present(raw.containerSpec) && present(raw.backend)) {
    errors.push(
      fieldErrors.forbidden(
        spec.child('containerSpec').toString(),
        'may not be set together with spec.backend: set spec.containerSpec for a model server the operator runs, or spec.backend for one you run',
      ),
    );
  }
  const dedicated = value.dedicatedResources;
  if (dedicated?.requiredReplicaCount !== undefined && dedicated.requiredReplicaCount > dedicated.minReplicaCount) {
    errors.push(
      fieldErrors.invalid(
        spec.child('dedicatedResources').child('requiredReplicaCount').toString(),
        dedicated.requiredReplicaCount,
        `must be at most minReplicaCount (${dedicated.minReplicaCount})`,
      ),
    );
  }
  const container = value.containerSpec;
  if (container === undefined) return errors;
  // The operator turns these three into the HPA's metrics; another name would silently scale on nothing.
  (dedicated?.autoscalingMetricSpecs ?? []).forEach((m, i) => {
    if (!(AUTOSCALING_METRICS as readonly string[]).includes(m.metricName)) {
      errors.push(
        fieldErrors.notSupported(
          spec.child('dedicatedResources').child('autoscalingMetricSpecs').index(i).child('metricName').toString(),
          m.metricName,
          AUTOSCALING_METRICS,
        ),
      );
    }
  });
  errors.push(...containerSpecErrors(container, spec.child('containerSpec')));
  return errors;
}

/** The rules of a ContainerSpec (DeployedModel spec.containerSpec, Model spec.versions[].containerSpec) its schema does not carry. */
export function containerSpecErrors(container: ContainerSpec, path: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  const timeout = container.deploymentTimeout;
  if (timeout !== undefined && durationSeconds(timeout) > MAX_DEPLOYMENT_TIMEOUT_SECONDS) {
    errors.push(
      fieldErrors.invalid(path.child('deploymentTimeout').toString(), timeout, 'must be at most 7200s (2 hours)'),
    );
  }
  for (const name of ['startupProbe', 'healthProbe', 'livenessProbe'] as const) {
    const probe = container[name];
    if (probe !== undefined && handlers(probe) > 1) {
      errors.push(
        fieldErrors.forbidden(
          path.child(name).toString(),
          'at most one of exec, httpGet, grpc and tcpSocket may be set',
        ),
      );
    }
  }
  return errors;
}

function handlers(probe: Probe): number {
  return [probe.exec, probe.httpGet, probe.grpc, probe.tcpSocket].filter((h) => h !== undefined).length;
}

/**
 * containerSpec, artifactUri and machineSpec never change (Vertex: "Immutable"): a new model version
 * is a new DeployedModel and a traffic-split change, so model pods never roll in place. The CEL rules
 * catch a change of a value present on both sides; adding or removing one is caught here too.
 */
export function servingImmutabilityErrors(
  raw: Record<string, unknown>,
  oldSpec: Record<string, unknown>,
): FieldError[] {
  const errors: FieldError[] = [];
  const check = (path: FieldPath, next: unknown, prev: unknown, shown: boolean): void => {
    const a = present(prev) ? prev : undefined;
    const b = present(next) ? next : undefined;
    if (canonicalJson(a) === canonicalJson(b)) return;
    const field = path.toString();
    if (b === undefined)
      errors.push(fieldErrors.forbidden(field, `is immutable and may not be removed; ${NEW_VERSION_ADVICE}`));
    else if (a === undefined)
      errors.push(
        fieldErrors.invalid(
          field,
          shown ? b : '<object>',
          `is immutable and may not be added after creation; ${NEW_VERSION_ADVICE}`,
        ),
      );
    else
      errors.push(
        fieldErrors.invalid(
          field,
          shown ? b : '<object>',
          `is immutable${shown ? ` (it is ${JSON.stringify(a)})` : ''}; ${NEW_VERSION_ADVICE}`,
        ),
      );
  };
  check(spec.child('containerSpec'), raw.containerSpec, oldSpec.containerSpec, false);
  check(spec.child('artifactUri'), raw.artifactUri, oldSpec.artifactUri, true);
  const machine = (s: Record<string, unknown>): unknown =>
    isRecord(s.dedicatedResources) ? s.dedicatedResources.machineSpec : undefined;
  // Moving between dedicated and automatic resources is a resources change, not a machine change.
  if (isRecord(raw.dedicatedResources) && isRecord(oldSpec.dedicatedResources)) {
    check(spec.child('dedicatedResources').child('machineSpec'), machine(raw), machine(oldSpec), false);
  }
  return errors;
}
