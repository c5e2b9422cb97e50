export { registryEndpointKind, registryServiceKind } from './kinds.js';
export { REGISTRY_CATEGORIES, REGISTRY_GROUP } from './status.js';
export {
  ANNOTATIONS_BUDGET,
  annotationKeyProblem,
  effectiveAnnotations,
  isReservedKey,
  validateAnnotations,
} from './annotations.js';
export { MAX_ADDRESS_LENGTH, addressProblem, isIpAddress } from './address.js';
export { endpointNameProblem, networkNameProblem, parentServiceName, serviceNameProblem } from './names.js';
export {
  CONVERSION_DATA_ANNOTATION,
  REGISTRY_ENDPOINT_KIND,
  REGISTRY_V1,
  REGISTRY_V1BETA1,
  convertRegistryEndpoint,
  type ConversionResult,
} from './conversion.js';
export {
  registryServiceSpecSchema,
  registryServiceStatusSchema,
  validateRegistryServiceV1,
  type RegistryServiceSpec,
  type RegistryServiceStatus,
  type ResolvedEndpoint,
} from './v1/service.js';
export {
  registryEndpointV1SpecSchema,
  registryEndpointV1StatusSchema,
  validateRegistryEndpointV1,
  type RegistryEndpointV1Spec,
  type RegistryEndpointV1Status,
} from './v1/endpoint.js';
export {
  registryEndpointV1beta1SpecSchema,
  registryEndpointV1beta1StatusSchema,
  validateRegistryEndpointV1beta1,
  type RegistryEndpointV1beta1Spec,
  type RegistryEndpointV1beta1Status,
} from './v1beta1/endpoint.js';
