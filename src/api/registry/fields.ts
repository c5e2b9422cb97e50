import { z } from 'zod';
import { celPattern, everyKey, immutable, validations } from '../crd/cel.js';
import { fieldErrors, type FieldError } from '../common/field-error.js';
import { ADDRESS_CHARSET_PATTERN, MAX_ADDRESS_LENGTH, addressProblem } from './address.js';
import {
  ENDPOINT_NAME_FORMAT,
  ENDPOINT_NAME_PATTERN,
  MAX_ENDPOINT_NAME_LENGTH,
  MAX_NETWORK_NAME_LENGTH,
  MAX_SERVICE_NAME_LENGTH,
  NETWORK_NAME_FORMAT,
  NETWORK_NAME_PATTERN,
  SERVICE_NAME_FORMAT,
  SERVICE_NAME_PATTERN,
  endpointNameProblem,
  networkNameProblem,
  serviceNameProblem,
} from './names.js';
import { IMMUTABLE_DETAIL, type OwnedField } from './validate-spec.js';
import { ANNOTATION_KEY, ANNOTATIONS_BUDGET, MAX_ANNOTATION_PREFIX_LENGTH, MAX_ANNOTATIONS } from './annotations.js';
import { DEFAULT_RESERVED_PREFIXES } from '../common/kind.js';

/** Schemas and checks of the fields the registry kinds and versions share. */

export const serviceNameSchema = z
  .string()
  .min(1)
  .max(MAX_SERVICE_NAME_LENGTH)
  .regex(SERVICE_NAME_PATTERN, { error: `must have the form ${SERVICE_NAME_FORMAT}` })
  .meta({
    description: `name is the Service Directory resource name of the service, ${SERVICE_NAME_FORMAT}; the project is a project ID or number, every other id 1-63 lowercase letters, digits or '-' (a letter first, no '-' last); required, immutable.`,
    ...validations(immutable(IMMUTABLE_DETAIL)),
  });

export const endpointNameSchema = z
  .string()
  .min(1)
  .max(MAX_ENDPOINT_NAME_LENGTH)
  .regex(ENDPOINT_NAME_PATTERN, { error: `must have the form ${ENDPOINT_NAME_FORMAT}` })
  .meta({
    description: `name is the Service Directory resource name of the endpoint, ${ENDPOINT_NAME_FORMAT}; its parent service (the name without /endpoints/{endpoint}) must exist as a RegistryService in the same namespace for the endpoint to be Ready; required, immutable.`,
    ...validations(immutable(IMMUTABLE_DETAIL)),
  });

/**
 * An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`), which the validator accepts and CEL's
 * `isIP` refuses: with its IPv4 tail as `0:0` and `ffff` as `1` it must be an IPv6 address `isIP` takes, and
 * the tail an IPv4 address. No group may have five hex digits, or `fffff` would pass as `1f`.
 */
const IPV4_MAPPED_IPV6 =
  "(self.lowerAscii().contains('ffff') && !self.matches('[0-9A-Fa-f]{5}') && (self.contains('.') ? isIP(self.substring(self.lastIndexOf(':') + 1)) && isIP(self.substring(0, self.lastIndexOf(':') + 1).lowerAscii().replace('ffff', '1') + '0:0') : isIP(self.lowerAscii().replace('ffff', '1'))))";

export const addressSchema = z
  .string()
  .max(MAX_ADDRESS_LENGTH)
  .regex(ADDRESS_CHARSET_PATTERN, { error: 'must be a bare IPv4 or IPv6 address' })
  // nullable: see portSchema.
  .nullish()
  .meta({
    description:
      'address is a bare IPv4 or IPv6 address (at most 45 characters) with no port, brackets or zone, for example 10.0.0.5 or 2001:db8::5; IPv4 octets have no leading zeros; optional: empty, null or absent means the address is not known yet.',
    ...validations({
      rule: `self == '' || isIP(self) || ${IPV4_MAPPED_IPV6}`,
      message:
        'must be a bare IPv4 or IPv6 address, with no port, brackets, zone or prefix length, and no leading zeros in IPv4 octets',
    }),
  });

export const portSchema = z
  .number()
  .int()
  .min(0)
  .max(65535)
  // nullable (in the CRD): server-side apply sends a manifest's `port: null` as written and the apiserver
  // validates it before it would prune it, so a non-nullable field refuses what client-side apply (which
  // turns null into "remove") accepts. The seed's unset port is 0; null reads as unset everywhere (common/unset.ts).
  .nullish()
  .meta({ description: 'port is the service port of the endpoint, 0 to 65535; optional (0 when absent or null).' });

/** A key under one of the default reserved prefixes (or a subdomain of one): kept, not judged, not counted. */
const RESERVED_KEY = `k.lowerAscii().matches(${celPattern(`^([^/]*\\.)?(${DEFAULT_RESERVED_PREFIXES.map((p) => p.replace(/\./g, '\\.')).join('|')})/`)})`;

const annotationRules = validations(
  everyKey(
    `${RESERVED_KEY} || ((!k.contains('/') || k.indexOf('/') <= ${MAX_ANNOTATION_PREFIX_LENGTH}) && k.matches(${celPattern(ANNOTATION_KEY)}))`,
    "a key is an optional prefix of dot-separated lowercase DNS labels (at most 63 characters each, 253 in all) and one '/', then a name of 1 to 63 characters that begins and ends with a letter or digit, with only letters, digits, '-', '_' and '.' between",
  ),
  {
    rule: `self.filter(k, !(${RESERVED_KEY})).map(k, size(k) + size(self[k])).sum() <= ${ANNOTATIONS_BUDGET}`,
    message: `must have at most ${ANNOTATIONS_BUDGET} characters in total over all keys and values (keys under a reserved prefix are not counted)`,
    reason: 'FieldValueInvalid',
  },
);

export function annotationsSchema(
  field: 'annotations' | 'metadata',
  of: string,
): z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>> {
  return z
    .record(z.string(), z.string())
    .optional()
    .meta({
      description: `${field} are key/value pairs for clients of the ${of}; a key is an optional DNS-subdomain prefix (at most 253 characters) and '/', then a name of 1-63 characters (letters or digits at both ends, '-', '_', '.' between); at most 512 characters in total over all keys and values; keys under a reserved prefix (by default endpoint-operator.dev/, endpoint-operator.io/ and their subdomains) are kept but ignored and not counted; optional.`,
      maxProperties: MAX_ANNOTATIONS,
      ...annotationRules,
    });
}

export const networkSchema = z
  .string()
  .max(MAX_NETWORK_NAME_LENGTH)
  .regex(NETWORK_NAME_PATTERN, { error: `must have the form ${NETWORK_NAME_FORMAT}` })
  .optional()
  .meta({
    description: `network is the VPC network of the endpoint, ${NETWORK_NAME_FORMAT}; the project must be given by number (a project ID is rejected); existence and reachability are not checked; optional, immutable (set only at creation).`,
    ...validations(immutable(IMMUTABLE_DETAIL)),
  });

function nameCheck(problem: (name: string) => string | undefined): OwnedField {
  return {
    type: 'string',
    check: (value, field) => {
      if (value === '') return [fieldErrors.required(field, `${field} is required`)];
      const p = problem(value);
      return p === undefined ? [] : [fieldErrors.invalid(field, value, p)];
    },
  };
}

export const serviceNameCheck = nameCheck(serviceNameProblem);
export const endpointNameCheck = nameCheck(endpointNameProblem);

export const networkCheck: OwnedField = {
  type: 'string',
  check: (value, field) => {
    const p = networkNameProblem(value);
    return p === undefined ? [] : [fieldErrors.invalid(field, value, p)];
  },
};

/** Service Directory accepts an endpoint without an address (proto3's empty string), so '' passes. */
export const addressCheck: OwnedField = {
  type: 'string',
  check: (value, field): FieldError[] => {
    if (value === '') return [];
    const p = addressProblem(value);
    return p === undefined ? [] : [fieldErrors.invalid(field, value, p)];
  },
};

export const portCheck: OwnedField = {
  type: 'number',
  check: (value, field) =>
    Number.isInteger(value) && value >= 0 && value <= 65535
      ? []
      : [fieldErrors.invalid(field, value, 'must be an integer from 0 to 65535')],
};
