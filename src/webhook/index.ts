/** The admission (validating, mutating) and conversion webhooks: server, certificates and their registration with the API server. */
export {
  startWebhookServer,
  DEFAULT_MAX_BODY_BYTES,
  type WebhookServer,
  type WebhookServerOptions,
  type ServingCertificate,
} from './server.js';
export { reviewAdmission, type AdmissionOutcome, type AdmissionContext } from './admission.js';
export {
  decodeAdmissionReview,
  MalformedReviewError,
  type AdmissionRequest,
  type AdmissionResponse,
} from './admission-review.js';
export {
  reviewConversion,
  decodeConversionReview,
  type ConversionRequest,
  type ConversionResponse,
} from './conversion.js';
export { converters, converterKey, type Converter, type ConverterTable, type ConversionResult } from './converters.js';
export {
  ensureWebhookCertificates,
  bundleFromSecret,
  type ServingCertificates,
  type WebhookKubeApi,
} from './certificate-secret.js';
export {
  planCertificates,
  issueCertificates,
  servingIdentity,
  needsRenewal,
  type CertificateBundle,
  type CertificatePlan,
} from './certificates.js';
export {
  webhookConfiguration,
  mutatingWebhookConfiguration,
  conversionClientConfig,
  WEBHOOK_NAME,
  MUTATING_WEBHOOK_NAME,
  NAMESPACE_OPT_OUT_LABEL,
  type ValidatingWebhookConfiguration,
  type MutatingWebhookConfiguration,
} from './configuration.js';
export { reviewFinalizers, finalizerPatch, type MutationOutcome } from './finalizers.js';
export { installWebhooks, type InstallReport } from './install.js';
export { startCertificateRenewal, type CertificateRenewalOptions } from './renewal.js';
export {
  DEFAULT_WEBHOOK_SETTINGS,
  localWebhookSettings,
  VALIDATE_PATH,
  MUTATE_PATH,
  CONVERT_PATH,
  type WebhookSettings,
  type WebhookEndpoint,
  type CertificateSource,
} from './settings.js';
export { runWebhooks, type RunWebhooksOptions, type RunningWebhooks } from './run.js';
