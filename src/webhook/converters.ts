import { convertRegistryEndpoint, REGISTRY_ENDPOINT_KIND } from '../api/registry/conversion.js';
import { REGISTRY_GROUP } from '../api/registry/status.js';

/**
 * The one place conversion functions are wired to kinds. A converter is pure and total: it takes
 * any object of the kind (in any served version) and returns it in `desiredAPIVersion`.
 */
export type ConversionResult = { ok: true; object: Record<string, unknown> } | { ok: false; message: string };

export type Converter = (obj: unknown, desiredAPIVersion: string) => ConversionResult;

/** Keyed by `<group>/<Kind>`, e.g. `registry.endpoint-operator.dev/RegistryEndpoint`. */
export type ConverterTable = Readonly<Record<string, Converter>>;

export function converterKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** Every kind served in more than one version, with its hub-and-spoke converter. */
export const converters: ConverterTable = {
  [converterKey(REGISTRY_GROUP, REGISTRY_ENDPOINT_KIND)]: convertRegistryEndpoint,
};
