import type { KindDefinition, PrinterColumn } from '../common/kind.js';
import { REGISTRY_CATEGORIES, REGISTRY_GROUP, ageColumn, readyColumns } from './status.js';
import {
  registryEndpointV1SpecSchema,
  registryEndpointV1StatusSchema,
  validateRegistryEndpointV1,
} from './v1/endpoint.js';
import { registryServiceSpecSchema, registryServiceStatusSchema, validateRegistryServiceV1 } from './v1/service.js';
import {
  registryEndpointV1beta1SpecSchema,
  registryEndpointV1beta1StatusSchema,
  validateRegistryEndpointV1beta1,
} from './v1beta1/endpoint.js';

// Resource names are long (up to 335 characters), so they show only with `-o wide`.
const nameColumn: PrinterColumn = { name: 'Name', type: 'string', jsonPath: '.spec.name', priority: 1 };
const endpointColumns: readonly PrinterColumn[] = [
  ...readyColumns,
  { name: 'Address', type: 'string', jsonPath: '.spec.address' },
  { name: 'Port', type: 'integer', jsonPath: '.spec.port' },
  nameColumn,
];

export const registryServiceKind: KindDefinition = {
  group: REGISTRY_GROUP,
  kind: 'RegistryService',
  listKind: 'RegistryServiceList',
  plural: 'registryservices',
  singular: 'registryservice',
  // `rs` is ReplicaSet's.
  shortNames: ['regsvc'],
  categories: REGISTRY_CATEGORIES,
  description:
    'RegistryService is a Service Directory service: a named entry whose status lists its ready RegistryEndpoints (address, port, effective annotations).',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: registryServiceSpecSchema,
      status: registryServiceStatusSchema,
      printerColumns: [...readyColumns, { name: 'Service', type: 'string', jsonPath: '.spec.name' }, ageColumn],
      validate: validateRegistryServiceV1,
    },
  ],
};

export const registryEndpointKind: KindDefinition = {
  group: REGISTRY_GROUP,
  kind: 'RegistryEndpoint',
  listKind: 'RegistryEndpointList',
  plural: 'registryendpoints',
  singular: 'registryendpoint',
  shortNames: ['regep'],
  categories: REGISTRY_CATEGORIES,
  description:
    'RegistryEndpoint is a network endpoint (IP address and port, with annotations) of a RegistryService, named by its Service Directory resource name; it is Ready once its parent service exists.',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: registryEndpointV1SpecSchema,
      status: registryEndpointV1StatusSchema,
      printerColumns: [...endpointColumns, ageColumn],
      validate: validateRegistryEndpointV1,
      unknownFieldHints: {
        'spec.metadata': 'v1 calls it spec.annotations (the same stored data as v1beta1 spec.metadata): rename it',
      },
    },
    {
      name: 'v1beta1',
      served: true,
      storage: false,
      spec: registryEndpointV1beta1SpecSchema,
      status: registryEndpointV1beta1StatusSchema,
      printerColumns: [
        ...endpointColumns,
        { name: 'Network', type: 'string', jsonPath: '.spec.network', priority: 1 },
        ageColumn,
      ],
      validate: validateRegistryEndpointV1beta1,
      unknownFieldHints: {
        'spec.annotations': 'v1beta1 calls it spec.metadata (the same stored data as v1 spec.annotations): rename it',
      },
    },
  ],
};
