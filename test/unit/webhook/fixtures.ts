import { z } from 'zod';
import { fieldErrors, type FieldError } from '../../../src/api/common/field-error.js';
import type { KindDefinition } from '../../../src/api/common/kind.js';
import { isRecord } from '../../../src/api/common/text.js';

/**
 * A small kind with the rule shapes the real kinds have (a range, a required field, an immutable
 * field, a warning), so the webhook is tested independently of any one API area's rules.
 */
export const widgetKind: KindDefinition = {
  group: 'test.endpoint-operator.dev',
  kind: 'Widget',
  listKind: 'WidgetList',
  plural: 'widgets',
  singular: 'widget',
  shortNames: [],
  categories: ['endpoint-operator'],
  description: 'A test kind.',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: z.object({}),
      status: z.object({}),
      printerColumns: [],
      validate(obj, oldObj) {
        const errors: FieldError[] = [];
        const warnings: string[] = [];
        const spec = isRecord(obj) && isRecord(obj.spec) ? obj.spec : {};
        if (spec.id === undefined) errors.push(fieldErrors.required('spec.id', 'spec.id is required'));
        if (typeof spec.port === 'number' && (spec.port < 0 || spec.port > 65535))
          errors.push(fieldErrors.invalid('spec.port', spec.port, 'must be between 0 and 65535, inclusive'));
        if (spec.legacy === true) warnings.push('spec.legacy is deprecated: remove it');
        if (spec.explode === true) throw new Error('boom');
        const oldSpec = isRecord(oldObj) && isRecord(oldObj.spec) ? oldObj.spec : undefined;
        if (oldSpec && oldSpec.id !== spec.id)
          errors.push(fieldErrors.invalid('spec.id', spec.id, 'field is immutable'));
        return { errors, warnings };
      },
    },
  ],
};

export function widget(
  spec: Record<string, unknown>,
  name = 'w1',
  extraMeta: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'test.endpoint-operator.dev/v1',
    kind: 'Widget',
    metadata: { name, namespace: 'ns1', ...extraMeta },
    spec,
  };
}

export function admissionReview(opts: {
  object?: unknown;
  oldObject?: unknown;
  operation?: string;
  kind?: { group: string; version: string; kind: string };
  uid?: string;
  name?: string;
  subResource?: string;
}): Record<string, unknown> {
  const kind = opts.kind ?? { group: 'test.endpoint-operator.dev', version: 'v1', kind: 'Widget' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: opts.uid ?? '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind,
      resource: { group: kind.group, version: kind.version, resource: `${kind.kind.toLowerCase()}s` },
      requestKind: kind,
      requestResource: { group: kind.group, version: kind.version, resource: `${kind.kind.toLowerCase()}s` },
      ...(opts.name === undefined ? {} : { name: opts.name }),
      ...(opts.subResource === undefined ? {} : { subResource: opts.subResource }),
      namespace: 'ns1',
      operation: opts.operation ?? 'CREATE',
      userInfo: { username: 'admin', groups: ['system:masters'] },
      object: opts.object,
      oldObject: opts.oldObject ?? null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}
