/**
 * The gRPC services the gateway serves, as protobuf-es descriptors read from the generated descriptor set
 * (google-apis.generated.ts, compiled from the protos Google's client packages ship). Messages are handled
 * as protobuf-es dynamic messages and turned into proto3 JSON: the same JSON the REST surface reads and
 * writes, since Google's REST mapping of these APIs is proto3 JSON.
 */
import { createFileRegistry, fromBinary, fromJson, toJson, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { GOOGLE_APIS_DESCRIPTOR_SET } from './google-apis.generated.js';

export const googleApis = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, Buffer.from(GOOGLE_APIS_DESCRIPTOR_SET, 'base64')),
);

function service(typeName: string) {
  const found = googleApis.getService(typeName);
  if (found === undefined) throw new Error(`the descriptor set has no service ${typeName}: run npm run generate`);
  return found;
}

export function messageType(typeName: string): DescMessage {
  const found = googleApis.getMessage(typeName);
  if (found === undefined) throw new Error(`the descriptor set has no message ${typeName}: run npm run generate`);
  return found;
}

export const PredictionService = service('google.cloud.aiplatform.v1.PredictionService');
export const EndpointService = service('google.cloud.aiplatform.v1.EndpointService');
export const ModelService = service('google.cloud.aiplatform.v1.ModelService');
export const LookupService = service('google.cloud.servicedirectory.v1.LookupService');

/** A message as proto3 JSON (field names in lowerCamelCase, as the REST API spells them). */
export function messageToJson(schema: DescMessage, message: unknown): JsonValue {
  return toJson(schema, message as never, { registry: googleApis });
}

/** Proto3 JSON as a message; fields the message does not have are dropped (the REST answers may carry more). */
export function messageFromJson(schema: DescMessage, json: JsonValue) {
  return fromJson(schema, json, { registry: googleApis, ignoreUnknownFields: true });
}
