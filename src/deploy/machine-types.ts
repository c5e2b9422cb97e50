/**
 * The machine catalogue a cluster gives DeployedModel containerSpec replicas (src/api/prediction/v1/
 * machine-catalogue.ts), shipped as a ConfigMap in the operator's namespace: a cluster edits it (or the
 * chart's files/machine-types.json) to describe its own nodes; the operator follows it live
 * (`--machine-catalogue`, a list and watch of this one ConfigMap; src/operator/machine-catalogue-watch.ts).
 */
import { DEFAULT_MACHINE_CATALOGUE, MACHINE_TYPES_KEY } from '../api/prediction/v1/machine-catalogue.js';
import { NAME, commonLabels, type DeployValues } from './values.js';

export const MACHINE_TYPES_CONFIGMAP = `${NAME}-machine-types`;
export { MACHINE_TYPES_KEY } from '../api/prediction/v1/machine-catalogue.js';

export function machineCatalogueJson(): string {
  return JSON.stringify(DEFAULT_MACHINE_CATALOGUE, null, 2);
}

export function machineTypesConfigMap(values: DeployValues): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: MACHINE_TYPES_CONFIGMAP, namespace: values.namespace, labels: commonLabels('controller') },
    data: { [MACHINE_TYPES_KEY]: machineCatalogueJson() },
  };
}
