/**
 * The prediction messages as the gateway decodes and encodes them: each a copy of Google's message whose
 * message-typed fields are `bytes`, wire-compatible (both are length-delimited), so that protobuf-es reads
 * `instances` as the Values' bytes and value-wire.ts turns them into JSON values in one pass, and a response's
 * `predictions` are written from the model server's parsed answer the same way. Map fields (`labels`, read by
 * nothing here) are left out and skipped as unknown fields.
 */
import { clone, create, createFileRegistry, type DescMessage, type DescMethodUnary } from '@bufbuild/protobuf';
import { DescriptorProtoSchema, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { messageType, PredictionService } from './services.js';

const PACKAGE = 'endpoint_operator.gateway.wire';

/** `message`'s descriptor with message fields as bytes (repeated stays repeated) and map fields dropped. */
function bytesVariant(message: DescMessage) {
  const proto = clone(DescriptorProtoSchema, message.proto);
  proto.nestedType = [];
  proto.field = proto.field
    .filter((f) => !message.fields.some((d) => d.number === f.number && d.fieldKind === 'map'))
    .map((f) =>
      f.type === FieldDescriptorProto_Type.MESSAGE ? { ...f, type: FieldDescriptorProto_Type.BYTES, typeName: '' } : f,
    );
  return proto;
}

const NAMES = ['PredictRequest', 'PredictResponse', 'ExplainRequest', 'ExplainResponse'] as const;

const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'endpoint_operator/gateway/wire.proto',
    package: PACKAGE,
    syntax: 'proto3',
    messageType: NAMES.map((name) => bytesVariant(messageType(`google.cloud.aiplatform.v1.${name}`))),
  }),
  () => undefined,
);

function wireMessage(name: (typeof NAMES)[number]): DescMessage {
  const found = registry.getMessage(`${PACKAGE}.${name}`);
  if (found === undefined) throw new Error(`no wire message ${name}`);
  return found;
}

export const PredictRequestWire = wireMessage('PredictRequest');
export const PredictResponseWire = wireMessage('PredictResponse');
export const ExplainRequestWire = wireMessage('ExplainRequest');
export const ExplainResponseWire = wireMessage('ExplainResponse');

/** The request and response of Predict and Explain as Connect serves them: the wire messages above. */
export interface PredictRequestWire {
  readonly endpoint: string;
  readonly instances: readonly Uint8Array[];
  readonly parameters: Uint8Array;
}
export interface ExplainRequestWire extends PredictRequestWire {
  readonly deployedModelId: string;
}

type Unary = DescMethodUnary<DescMessage, DescMessage>;

/** PredictionService's `name` method, served with the given messages (same path, same wire format). */
export function servedAs(name: 'Predict' | 'Explain', input: DescMessage, output: DescMessage): Unary {
  const found = PredictionService.methods.find((m) => m.name === name);
  if (found === undefined || found.methodKind !== 'unary') throw new Error(`PredictionService has no unary ${name}`);
  return { ...(found as Unary), input, output };
}
