/**
 * DeployedModel `spec.backend`: the model server that serves a deployed model, so the gateway can
 * route predict/explain calls to it. Either a Service in the DeployedModel's namespace (the gateway
 * balances over the ready endpoints of its EndpointSlices) or a URL for a server outside the cluster.
 *
 * The protocols are the two that model servers of the ecosystem speak:
 * - `KServeV1`: the TensorFlow-Serving-style V1 protocol (`POST /v1/models/{name}:predict`, `:explain`,
 *   readiness `GET /v1/models/{name}`), as KServe's `protocolVersion: v1`;
 * - `OpenInferenceV2`: the Open Inference Protocol (`POST /v2/models/{name}/infer`, readiness
 *   `GET /v2/models/{name}/ready`), as KServe's `protocolVersion: v2`, Triton and MLServer.
 *
 * This file is the contract between the API (schema, validation, CRD) and the gateway. The CRD's CEL
 * rules and the DeployedModel validator (backend-validation.ts) enforce the same rules.
 */
import { z } from 'zod';
import { celPattern, quoted, validations } from '../../crd/cel.js';

export const BACKEND_PROTOCOLS = ['KServeV1', 'OpenInferenceV2'] as const;
export type BackendProtocol = (typeof BACKEND_PROTOCOLS)[number];

/** A Service name: an RFC 1035 label (Services are stricter than most kinds). */
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** A named port: an IANA service name (RFC 6335), as a Service port name must be. */
export const IANA_SVC_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A model name on a KServe or Open Inference server: it becomes one URL path segment. */
export const BACKEND_MODEL_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

export const backendServiceRefSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(63)
    .regex(DNS1035_LABEL, { error: 'must be the name of a Service in the same namespace (an RFC 1035 label)' })
    .meta({
      description:
        "name of the Service in the DeployedModel's namespace whose ready endpoints serve the model; required.",
    }),
  port: z
    .union(
      [
        z
          .number()
          .int({ error: 'must be an integer' })
          .min(1, { error: 'must be a port number from 1 to 65535' })
          .max(65535, { error: 'must be a port number from 1 to 65535' }),
        z.string().min(1).max(15).regex(IANA_SVC_NAME, { error: 'must be a Service port name (an IANA service name)' }),
      ],
      { error: 'must be a port number (1..65535) or the name of a port of the Service' },
    )
    .meta({
      description: 'port of the Service: its number (1..65535) or its name; required.',
      ...validations({
        rule: `type(self) == int ? self >= 1 && self <= 65535 : size(self) <= 15 && self.matches(${celPattern(IANA_SVC_NAME)}) && self.matches('[a-z]') && !self.contains('--')`,
        message:
          'must be a port number from 1 to 65535, or a port name (an IANA service name: at most 15 lowercase letters, digits and dashes, with a letter, no dash at either end and no two in a row)',
      }),
    }),
});

export const backendSchema = z
  .object({
    service: backendServiceRefSchema.optional().meta({
      description: 'service names a Service in the same namespace; exactly one of service and url is required.',
    }),
    url: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, { error: 'must be an http or https URL without query or fragment' })
      .optional()
      .meta({
        description:
          'url of a model server outside the cluster, for example https://models.example.com:8443; not probed for readiness; exactly one of service and url is required.',
        // The value is not echoed: it holds the credentials the rule is about.
        ...validations({
          rule: "!self.matches('^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@')",
          message:
            'must not contain credentials (user:password@): the model server must authenticate the gateway another way',
        }),
      }),
    protocol: z
      .enum(BACKEND_PROTOCOLS)
      .meta({ description: 'protocol the model server speaks: KServeV1 or OpenInferenceV2; required.' }),
    modelName: z
      .string()
      .min(1)
      .max(253)
      .regex(BACKEND_MODEL_NAME, {
        error: 'must be a model name: alphanumerics, dots, dashes and underscores, alphanumeric at both ends',
      })
      .meta({
        description:
          "modelName is the model's name on that server (the {name} in /v1/models/{name}:predict); required.",
      }),
  })
  .meta(
    validations(
      {
        rule: "has(self.service) || (has(self.url) && self.url != '')",
        message:
          'exactly one of spec.backend.service (a Service in this namespace) and spec.backend.url (a server outside the cluster) is required',
        reason: 'FieldValueRequired',
      },
      {
        rule: "!(has(self.service) && has(self.url) && self.url != '')",
        message: 'may not be set together with spec.backend.service: set exactly one of the two',
        messageExpression: `'may not be set together with spec.backend.service (' + ${quoted('self.service.name')} + '): set exactly one of the two'`,
        fieldPath: '.url',
        reason: 'FieldValueForbidden',
      },
    ),
  );

export type BackendServiceRef = z.infer<typeof backendServiceRefSchema>;
export type DeployedModelBackend = z.infer<typeof backendSchema>;
