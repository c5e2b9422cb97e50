/**
 * A deployed Model cannot be deleted, nor a version a DeployedModel serves removed from it (Vertex answers
 * FAILED_PRECONDITION). The apiserver itself refuses both, through a ValidatingAdmissionPolicy (GA since
 * Kubernetes 1.30) that reads the Model's own `status.deployedModels`, which the operator keeps. Refusing the
 * request is what Vertex does and what a GitOps tool can report: Argo CD's prune shows the refusal as a sync
 * error and retries, `kubectl delete` prints it. A finalizer would accept the DELETE and leave the Model hanging
 * in Terminating, reported as a success. The policy runs without the operator's webhook (which never intercepts
 * DELETE), so it holds while the operator is down; docs/models.md says what a stale status means.
 */
import { PREDICTION_GROUP } from './names.js';

export const MODEL_POLICY_NAME = `models-in-use.${PREDICTION_GROUP}`;

const deployments = (obj: string): string =>
  `has(${obj}.status) && has(${obj}.status.deployedModels) ? ${obj}.status.deployedModels : []`;

const LABELS = { 'app.kubernetes.io/name': 'endpoint-operator', 'app.kubernetes.io/part-of': 'endpoint-operator' };

export const modelPolicy = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: MODEL_POLICY_NAME, labels: LABELS },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [
        // The main resource only: the operator's status writes are what keep the list current.
        { apiGroups: [PREDICTION_GROUP], apiVersions: ['*'], operations: ['DELETE', 'UPDATE'], resources: ['models'] },
      ],
    },
    variables: [
      { name: 'deployed', expression: deployments('oldObject') },
      {
        name: 'versions',
        expression:
          "request.operation == 'UPDATE' && has(object.spec.versions) ? object.spec.versions.map(v, v.id) : []",
      },
    ],
    validations: [
      {
        expression: "request.operation != 'DELETE' || size(variables.deployed) == 0",
        messageExpression:
          "'Model ' + oldObject.metadata.name + ' is deployed (status.deployedModels: ' + variables.deployed.map(d, 'DeployedModel ' + d.deployedModel + ' serves version ' + d.versionId).join(', ') + '); FAILED_PRECONDITION: undeploy it first (delete those DeployedModels), then delete the Model'",
        reason: 'Forbidden',
      },
      {
        expression: "request.operation != 'UPDATE' || variables.deployed.all(d, d.versionId in variables.versions)",
        messageExpression:
          "'spec.versions: Forbidden: ' + variables.deployed.filter(d, !(d.versionId in variables.versions)).map(d, 'version ' + d.versionId + ' may not be removed while DeployedModel ' + d.deployedModel + ' serves it').join(', ') + ' (status.deployedModels; FAILED_PRECONDITION): undeploy it first'",
        reason: 'Forbidden',
      },
    ],
  },
} as const;

export const modelPolicyBinding = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: MODEL_POLICY_NAME, labels: LABELS },
  spec: { policyName: MODEL_POLICY_NAME, validationActions: ['Deny'] },
} as const;

/** What the Model kind installs besides its CRD, in apply order. */
export const modelPolicyObjects = [modelPolicy, modelPolicyBinding] as const;
