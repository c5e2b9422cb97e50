import type { KindDefinition, PrinterColumn } from '../../common/kind.js';
import { deployedModelSpecSchema, deployedModelStatusSchema } from './deployed-model-schema.js';
import { validateDeployedModel } from './deployed-model-validation.js';
import { predictionEndpointSpecSchema, predictionEndpointStatusSchema } from './endpoint-schema.js';
import { validatePredictionEndpoint } from './endpoint-validation.js';
import { modelSpecSchema, modelStatusSchema } from './model-schema.js';
import { validateModel } from './model-validation.js';
import { PREDICTION_FINALIZER, PREDICTION_GROUP } from './names.js';

const ready: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const reason: PrinterColumn = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
};
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const predictionEndpointKind: KindDefinition = {
  group: PREDICTION_GROUP,
  kind: 'PredictionEndpoint',
  listKind: 'PredictionEndpointList',
  plural: 'predictionendpoints',
  singular: 'predictionendpoint',
  shortNames: ['pe'],
  categories: ['endpoint-operator'],
  description:
    'PredictionEndpoint is an endpoint that serves predictions from the models deployed to it (DeployedModel), split by spec.trafficSplit.',
  finalizer: PREDICTION_FINALIZER,
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: predictionEndpointSpecSchema,
      status: predictionEndpointStatusSchema,
      printerColumns: [
        { name: 'Display Name', type: 'string', jsonPath: '.spec.displayName' },
        // A CRD column cannot count list items; the ids of the deployed models are the next best thing.
        {
          name: 'Models',
          type: 'integer',
          jsonPath: '.status.deployedModelCount',
          description: 'number of deployed models',
        },
        ready,
        reason,
        age,
      ],
      validate: validatePredictionEndpoint,
    },
  ],
};

export const deployedModelKind: KindDefinition = {
  group: PREDICTION_GROUP,
  kind: 'DeployedModel',
  listKind: 'DeployedModelList',
  plural: 'deployedmodels',
  singular: 'deployedmodel',
  shortNames: ['dm'],
  categories: ['endpoint-operator'],
  description:
    'DeployedModel deploys a model to a PredictionEndpoint while it exists; deleting it undeploys the model.',
  finalizer: PREDICTION_FINALIZER,
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: deployedModelSpecSchema,
      status: deployedModelStatusSchema,
      printerColumns: [
        { name: 'Endpoint', type: 'string', jsonPath: '.spec.endpointRef.name' },
        { name: 'Model', type: 'string', jsonPath: '.spec.model' },
        { name: 'ID', type: 'string', jsonPath: '.status.id' },
        ready,
        reason,
        age,
      ],
      validate: validateDeployedModel,
    },
  ],
};

export const modelKind: KindDefinition = {
  group: PREDICTION_GROUP,
  kind: 'Model',
  listKind: 'ModelList',
  plural: 'models',
  singular: 'model',
  shortNames: [],
  categories: ['endpoint-operator'],
  description:
    'Model is a model of the registry with its versions (each an artifact and a model server, immutable once created) and version aliases (default and others, movable); DeployedModels name it as projects/{project}/locations/{location}/models/{name}[@version|@alias].',
  // No finalizer: a Model in use is protected by refusing its DELETE (model-policy.ts), not by holding it.
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: modelSpecSchema,
      status: modelStatusSchema,
      printerColumns: [
        { name: 'Display Name', type: 'string', jsonPath: '.spec.displayName' },
        {
          name: 'Default',
          type: 'string',
          jsonPath: '.spec.versionAliases[?(@.alias=="default")].versionId',
          description: 'the version the default alias names',
        },
        {
          name: 'Deployed',
          type: 'string',
          jsonPath: '.status.deployedModels[*].versionId',
          description: 'the versions DeployedModels serve',
        },
        ready,
        reason,
        age,
      ],
      validate: validateModel,
    },
  ],
};
