/**
 * `helm install`, `helm upgrade` and `helm uninstall` of the chart for real, with Helm 3 (client-side apply) and
 * Helm 4 (server-side apply by default), each on a control plane of its own (helm-release.ts says why):
 * - a fresh install with --wait: the operator's and the gateway's pods scheduled onto the kwok Nodes and Ready,
 *   the Deployments available, the CRDs Established; uninstall keeps the CRDs (crds.keep) and the custom
 *   resources in them; the values carry a bucket map, whose ModelArtifactBucket Helm would refuse beside its CRD
 *   ("ensure CRDs are installed first"): the chart makes it a post-install hook, and the next upgrade adopts it;
 * - an upgrade from chart 0.1.0, whose CRDs Helm created from crds/ without any ownership metadata: Helm refuses
 *   to adopt them into the release ("invalid ownership metadata") unless told to with --take-ownership, which
 *   the README prescribes for that one upgrade; then the CRDs are the release's, and the next upgrade delivers
 *   a CRD change, without dropping the conversion caBundle the operator injected, and a bucket map as objects of the release.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIMULATED_NODE_LABEL } from '../../../dev/cluster/nodes.js';
import { DEFAULT_DEPLOY_VALUES } from '../../../src/deploy/values.js';
import { eventually } from '../reconcilers/harness.js';
import { allKinds } from '../../../src/api/kinds.js';
import { crdName } from '../../../src/api/crd/generate.js';
import { crdTemplateFile } from '../../../src/deploy/crd-templates.js';
import { ensureHelm, renderChart } from '../../support/helm.js';
import { CHART, condition, editedChart, OPERATOR_NS, previousChart, RELEASE, RELEASE_NS, startHelmCluster, type HelmCluster, type K8sObject } from './helm-release.js';

const CRD_NAMES = allKinds.map((def) => crdName(def)).sort();
const PART_OF = ['-l', 'app.kubernetes.io/part-of=endpoint-operator'];
const REGISTRY_ENDPOINTS = 'registryendpoints.registry.endpoint-operator.dev';
const SHOPS = allKinds.find((def) => def.kind === 'Shop');
if (SHOPS === undefined) throw new Error('no Shop kind');
const USER_NS = 'user-data';
const GATEWAY_SELECTOR = 'app.kubernetes.io/name=endpoint-operator-gateway';
/** A bucket map of one bucket, as a user's values carry it: the release then holds a ModelArtifactBucket beside its CRD. */
const BUCKET = 'demo-models';
const BUCKET_SPEC = { oci: { repository: 'registry.example.com/demo-models' } };
/** The bucket as an object of the release's manifest (the CRD's `names.kind` is no match: it is indented). */
const BUCKET_IN_MANIFEST = `\nkind: ModelArtifactBucket\nmetadata:\n  name: ${BUCKET}\n`;
const BUCKET_VALUES = ['--set-json', `modelArtifactBuckets=${JSON.stringify({ [BUCKET]: BUCKET_SPEC })}`];

/** A namespace opted out of the admission webhooks (whose pods never answer here), holding one custom resource. */
const USER_DATA = `apiVersion: v1
kind: Namespace
metadata:
  name: ${USER_NS}
  labels: { endpoint-operator.dev/webhook: disabled }
---
apiVersion: registry.endpoint-operator.dev/v1
kind: RegistryService
metadata: { name: checkout, namespace: ${USER_NS} }
spec: { name: projects/demo-project/locations/europe-west4/namespaces/shop/services/checkout }
`;

/**
 * The operator's and the gateway's pods on the simulated Nodes and Ready, both Deployments available, every CRD
 * Established. The gateway's Deployment names no replica count (its HPA owns it): created at the default of one, the
 * HPA raises it to its minReplicas within a sync period (15 s), with or without metrics.
 */
async function expectRunning(c: HelmCluster): Promise<void> {
  await c.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', ...CRD_NAMES]);
  const minReplicas = DEFAULT_DEPLOY_VALUES.gateway.autoscaling.minReplicas;
  await eventually(`the gateway HPA raising its Deployment to ${minReplicas} replicas`, async () => (await c.get('deployment', 'endpoint-operator-gateway', OPERATOR_NS)).spec.replicas === minReplicas, 90_000);
  await c.kubectl(['wait', '--for=condition=Available', '--timeout=60s', '-n', OPERATOR_NS, 'deployment', '--all']);
  const deployments = await c.list('deployments', ['-n', OPERATOR_NS]);
  expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['endpoint-operator', 'endpoint-operator-gateway']);
  for (const d of deployments) expect(d.status?.availableReplicas, d.metadata.name).toBe(d.spec.replicas);
  const pods = await c.list('pods', ['-n', OPERATOR_NS]);
  expect(pods).toHaveLength(deployments.reduce((n, d) => n + (d.spec.replicas ?? 0), 0));
  const kwokNodes = (await c.list('nodes', ['-l', SIMULATED_NODE_LABEL])).map((n) => n.metadata.name);
  expect(kwokNodes.sort()).toEqual([...c.plane.nodes].sort());
  for (const pod of pods) {
    expect(kwokNodes, pod.metadata.name).toContain(pod.spec.nodeName);
    expect(condition(pod, 'Ready'), pod.metadata.name).toBe('True');
  }
}

/** Helm 3 updates with client-side patches; Helm 4 applies server-side, as the field managers show. */
function expectApplyMode(obj: K8sObject, major: 3 | 4): void {
  const helmWrites = (obj.metadata.managedFields ?? []).filter((f) => f.manager === 'helm').map((f) => f.operation);
  expect(helmWrites, obj.metadata.name).toContain(major === 4 ? 'Apply' : 'Update');
  if (major === 4) expect(helmWrites, obj.metadata.name).not.toContain('Update');
}

/** The apiserver omits an empty list (`shortNames: []`) from what it stores, as Go's omitempty does. */
function withoutEmptyLists<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutEmptyLists) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => !(Array.isArray(v) && v.length === 0)).map(([k, v]) => [k, withoutEmptyLists(v)])) as T;
}

function expectReleaseOwns(crd: K8sObject): void {
  expect(crd.metadata.labels?.['app.kubernetes.io/managed-by'], crd.metadata.name).toBe('Helm');
  expect(crd.metadata.annotations, crd.metadata.name).toMatchObject({ 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': RELEASE_NS, 'helm.sh/resource-policy': 'keep' });
}

describe.each([3, 4] as const)('Helm %i', (major) => {
  let helmBinary: string;
  beforeAll(async () => {
    helmBinary = await ensureHelm(major); // built from the Go module proxy on a fresh machine: minutes, once
  }, 900_000);

  describe('a fresh install of the chart', () => {
    let c: HelmCluster;
    beforeAll(async () => {
      c = await startHelmCluster(helmBinary);
    });
    afterAll(async () => c?.stop());

    it('installs with --wait and a bucket map: pods on the kwok Nodes and Ready, Deployments available, CRDs Established, the bucket created', async () => {
      // kubectl maps every object before it sends one, as Helm does: a bucket sent with its CRD is refused.
      const rendered = await c.helm(['template', RELEASE, CHART, '--namespace', RELEASE_NS, ...BUCKET_VALUES]);
      await expect(c.kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], rendered)).rejects.toThrow(/no matches for kind "ModelArtifactBucket" in version "prediction.endpoint-operator.dev\/v1"\s+ensure CRDs are installed first/);
      const out = await c.install(CHART, BUCKET_VALUES);
      expect(out).toContain('STATUS: deployed');
      await expectRunning(c);
      // Created by the post-install hook, after the CRDs: not yet in the release's manifest.
      const bucket = await c.get('modelartifactbuckets', BUCKET);
      expect(bucket.spec).toEqual(BUCKET_SPEC);
      expect(await c.helm(['get', 'manifest', RELEASE, '--namespace', RELEASE_NS])).not.toContain(BUCKET_IN_MANIFEST);
      // The next upgrade finds the kind and adopts the bucket into the release, the same object (no delete and recreate).
      await c.upgrade(CHART, ['--reuse-values']);
      expect(await c.helm(['get', 'manifest', RELEASE, '--namespace', RELEASE_NS])).toContain(BUCKET_IN_MANIFEST);
      expect((await c.get('modelartifactbuckets', BUCKET)).metadata.uid).toBe(bucket.metadata.uid);
      expectApplyMode(await c.get('deployment', 'endpoint-operator', OPERATOR_NS), major);
      for (const crd of await c.list('crd', PART_OF)) expectReleaseOwns(crd);
    });

    it('evicts gateway pods only as its PodDisruptionBudget allows: the eviction that would leave none serving is refused (429)', async () => {
      const gatewayPods = async (): Promise<K8sObject[]> => (await c.list('pods', ['-n', OPERATOR_NS, '-l', GATEWAY_SELECTOR])).filter((p) => p.metadata.deletionTimestamp === undefined);
      const evict = (pod: string): Promise<string> =>
        c.kubectl(['create', '--raw', `/api/v1/namespaces/${OPERATOR_NS}/pods/${pod}/eviction`, '-f', '-'], JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: OPERATOR_NS } }));
      const allowed = async (): Promise<number | undefined> => (await c.get("pdb", "endpoint-operator-gateway", OPERATOR_NS)).status?.disruptionsAllowed;
      await eventually('the gateway PDB allowing one disruption', async () => (await allowed()) === 1);
      const [first, second] = (await gatewayPods()).map((p) => p.metadata.name);
      if (first === undefined || second === undefined) throw new Error('fewer than two gateway pods');
      // As `kubectl drain` does: the nodes cordoned first, so no replacement becomes Ready while the test evicts.
      await c.kubectl(['cordon', '-l', SIMULATED_NODE_LABEL]);
      try {
        await evict(first);
        expect(await allowed()).toBe(0);
        await expect(evict(second)).rejects.toThrow(/TooManyRequests.*Cannot evict pod as it would violate the pod's disruption budget/s);
        expect((await gatewayPods()).map((p) => p.metadata.name)).toContain(second);
      } finally {
        await c.kubectl(['uncordon', '-l', SIMULATED_NODE_LABEL]);
      }
      // The replacement Ready, one disruption is allowed again: the same eviction now goes through.
      await eventually('the gateway PDB allowing one disruption again', async () => (await allowed()) === 1, 60_000);
      await evict(second);
      await expectRunning(c);
      expect((await gatewayPods()).map((p) => p.metadata.name)).not.toContain(second);
    });

    it('uninstalls everything but the CRDs (crds.keep) and the custom resources in them', async () => {
      await c.kubectl(['apply', '-f', '-'], USER_DATA);
      const before = await c.get('registryservices', 'checkout', USER_NS);
      const out = await c.helm(['uninstall', RELEASE, '--namespace', RELEASE_NS, '--wait', '--timeout', '2m']);
      expect(out).toContain(`release "${RELEASE}" uninstalled`);
      expect((await c.list('crd', PART_OF)).map((crd) => crd.metadata.name).sort()).toEqual(CRD_NAMES);
      expect((await c.get('registryservices', 'checkout', USER_NS)).metadata.uid).toBe(before.metadata.uid);
      expect(await c.list('deployments', ['-n', OPERATOR_NS])).toEqual([]);
      expect(await c.list('validatingwebhookconfigurations', PART_OF)).toEqual([]);
      // The bucket map is the release's (adopted by the upgrade above), so it goes with it.
      expect(await c.list('modelartifactbuckets', [])).toEqual([]);
    });
  });

  describe('an upgrade from chart 0.1.0 (CRDs in crds/)', () => {
    let c: HelmCluster;
    const caBundle = (): string => readFileSync(c.plane.caFile).toString('base64');
    beforeAll(async () => {
      c = await startHelmCluster(helmBinary);
      const previous = await previousChart(c.work);
      expect(await c.install(previous)).toContain('STATUS: deployed');
      expect(await c.helm(['list', '--namespace', RELEASE_NS])).toContain('endpoint-operator-0.1.0');
      await c.kubectl(['apply', '-f', '-'], USER_DATA);
      // As the operator does at start-up (src/webhook/install.ts): its CA into the conversion webhook, by a merge patch.
      const patch = JSON.stringify({ spec: { conversion: { webhook: { clientConfig: { caBundle: caBundle() } } } } });
      await c.kubectl(['patch', 'crd', REGISTRY_ENDPOINTS, '--type', 'merge', '--field-manager', 'endpoint-operator-webhook', '-p', patch]);
    });
    afterAll(async () => c?.stop());

    it('finds the CRDs 0.1.0 created from crds/ without Helm ownership metadata, and refuses to adopt them without --take-ownership', async () => {
      for (const crd of await c.list('crd', PART_OF)) expect(crd.metadata.labels?.['app.kubernetes.io/managed-by'], crd.metadata.name).toBeUndefined();
      await expect(c.upgrade(CHART)).rejects.toThrow(/CustomResourceDefinition "[^"]+" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata/);
      expect(await c.helm(['history', RELEASE, '--namespace', RELEASE_NS])).not.toContain('endpoint-operator-0.2.0');
    });

    it('upgrades with --take-ownership: the CRDs join the release as the new chart renders them, the caBundle and the custom resources stay', async () => {
      const userData = await c.get('registryservices', 'checkout', USER_NS);
      await c.upgrade(CHART, ['--take-ownership']);
      expect(await c.helm(['list', '--namespace', RELEASE_NS])).toContain('endpoint-operator-0.2.0');
      await expectRunning(c);
      const rendered = (await renderChart(helmBinary, CHART, {}, { name: RELEASE, namespace: RELEASE_NS })).manifests.filter((m) => m.template.startsWith('templates/crd-'));
      expect(rendered.map((m) => (m.object as K8sObject).metadata.name).sort()).toEqual(CRD_NAMES);
      for (const { object } of rendered) {
        const want = object as K8sObject;
        const live = await c.get('crd', want.metadata.name);
        expectReleaseOwns(live);
        expectApplyMode(live, major);
        expect(live.spec, want.metadata.name).toMatchObject(withoutEmptyLists(want.spec));
      }
      const registryEndpoints = await c.get('crd', REGISTRY_ENDPOINTS);
      expect(registryEndpoints.spec).toMatchObject({ conversion: { webhook: { clientConfig: { caBundle: caBundle() } } } });
      expect((await c.get('registryservices', 'checkout', USER_NS)).metadata.uid).toBe(userData.metadata.uid);
    });

    it('delivers a CRD change and a bucket map on the next upgrade: a new printer column and short name, the bucket an object of the release', async () => {
      const changed = editedChart(CHART, c.work, '0.2.1', crdTemplateFile(SHOPS), (text) =>
        text
          .replace(/^( {6}additionalPrinterColumns:\n)/m, '$1        - name: Upgraded\n          type: string\n          jsonPath: .metadata.uid\n')
          .replace(/^( {4}shortNames:\n)/m, '$1      - upgradedshop\n'),
      );
      await c.upgrade(changed, BUCKET_VALUES);
      expect(await c.helm(['list', '--namespace', RELEASE_NS])).toContain('endpoint-operator-0.2.1');
      // The kind existed before this upgrade: the bucket is an ordinary object of the release, not a hook.
      const bucket = await c.get('modelartifactbuckets', BUCKET);
      expect(bucket.spec).toEqual(BUCKET_SPEC);
      expect(bucket.metadata.annotations?.['helm.sh/hook']).toBeUndefined();
      expect(await c.helm(['get', 'manifest', RELEASE, '--namespace', RELEASE_NS])).toContain(BUCKET_IN_MANIFEST);
      const shops = await c.get('crd', crdName(SHOPS));
      expect((shops.spec['names'] as { shortNames: string[] }).shortNames).toContain('upgradedshop');
      const columns = (shops.spec['versions'] as { additionalPrinterColumns: { name: string; jsonPath: string }[] }[])[0]?.additionalPrinterColumns;
      expect(columns?.[0]).toMatchObject({ name: 'Upgraded', jsonPath: '.metadata.uid' });
      await c.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', crdName(SHOPS)]);
      expect((await c.get('crd', REGISTRY_ENDPOINTS)).spec).toMatchObject({ conversion: { webhook: { clientConfig: { caBundle: caBundle() } } } });
      await expectRunning(c);
    });
  });
});
