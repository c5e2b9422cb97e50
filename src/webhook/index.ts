/** The admission and conversion webhooks: server, certificates and their registration with the API server. */
export { startWebhookServer, DEFAULT_MAX_BODY_BYTES, type WebhookServer, type WebhookServerOptions, type TlsMaterial } from './server.js';
export { reviewAdmission, type AdmissionOutcome, type AdmissionContext } from './admission.js';
export { decodeAdmissionReview, MalformedReviewError, type AdmissionRequest, type AdmissionResponse } from './admission-review.js';
export { reviewConversion, decodeConversionReview, type ConversionRequest, type ConversionResponse } from './conversion.js';
export { converters, converterKey, type Converter, type ConverterTable, type ConversionResult } from './converters.js';
export { ensureWebhookCertificates, bundleFromSecret, type ServingCertificates, type WebhookKubeApi } from './certificate-secret.js';
export { planCertificates, issueCertificates, servingIdentity, needsRenewal, type CertificateBundle, type CertificatePlan } from './certificates.js';
export { webhookConfiguration, conversionClientConfig, WEBHOOK_NAME, NAMESPACE_OPT_OUT_LABEL, type ValidatingWebhookConfiguration } from './configuration.js';
export { installWebhooks, type InstallReport } from './install.js';
export { startCertificateRenewal, type CertificateRenewalOptions } from './renewal.js';
export { DEFAULT_WEBHOOK_SETTINGS, localWebhookSettings, VALIDATE_PATH, CONVERT_PATH, type WebhookSettings, type WebhookEndpoint, type CertificateSource } from './settings.js';
export { runWebhooks, type RunWebhooksOptions, type RunningWebhooks } from './run.js';
