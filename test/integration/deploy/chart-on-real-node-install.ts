/**
 * The chart as a user installs it on a control plane of its own with the real node: the container image built from
 * the real Dockerfile (dev/image/) and the Vertex model server image, both pushed to the real node's local registry,
 * then `helm install`ed by real Helm with the pods placed on the real node, the gateway at its HPA's minimum, and the
 * machine catalogue describing the real node. Shared by chart-on-real-node.test.ts and bench/gateway-load.ts.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { MACHINE_TYPES_KEY } from '../../../src/api/prediction/v1/machine-catalogue.js';
import { MACHINE_TYPES_CONFIGMAP } from '../../../src/deploy/machine-types.js';
import { DEFAULT_DEPLOY_VALUES, GATEWAY_NAME } from '../../../src/deploy/values.js';
import type { ControlPlane } from '../../../dev/cluster/index.js';
import { ON_REAL_NODE } from '../../../dev/cluster/real-node/node-config.js';
import { publishToNodeRegistry } from '../../../dev/cluster/real-node/node-images.js';
import { buildImage, LOCAL_IMAGE_NAME, type BuiltImage } from '../../../dev/image/build.js';
import { imageLogDir } from '../../../dev/image/podman.js';
import { ensureModelServerImage } from '../../../dev/models/model-server-image.js';
import { kubectl } from '../../support/cluster.js';
import { REPO_ROOT } from '../../support/examples.js';
import { ensureHelm, helmOn } from '../../support/helm.js';
import { REAL_NODE_CATALOGUE, startRealNodeCluster } from '../../support/real-node.js';

export const NS = DEFAULT_DEPLOY_VALUES.namespace;
const CHART = join(REPO_ROOT, 'charts/endpoint-operator');
/** The audience of a caller's token for the gateway (issue 22's `--auth-audiences` default). */
export const GATEWAY_AUDIENCE = 'endpoint-operator-gateway';
/** The gateway's certificate names its Service; clients check it against that name, whatever address they dial. */
export const GATEWAY_HOST = `${GATEWAY_NAME}.${NS}.svc`;

/** An image in the node's registry: `ref` for pod specs, repository and tag for the chart's values. */
export interface PublishedImage {
  readonly ref: string;
  readonly repository: string;
  readonly tag: string;
}

function published(ref: string): PublishedImage {
  const colon = ref.lastIndexOf(':');
  return { ref, repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
}

export interface ChartOnRealNode {
  readonly image: BuiltImage;
  readonly operatorImage: PublishedImage;
  readonly modelImage: PublishedImage;
  readonly plane: ControlPlane;
  /** kubectl against the plane; throws on a non-zero exit. */
  k(args: string[], input?: string): Promise<string>;
  /** The gateway's CA (the chart's TLS Secret's ca.crt). */
  gatewayCa(): Promise<string>;
}

export interface ChartInstallOptions {
  /** Names the control plane's log lines and the push log. */
  readonly name: string;
  /** Namespaces created before the chart (a Role of the chart may live in one). */
  readonly namespaces: readonly string[];
  /** Values beside the image and the real-node placement (merged at the top level). */
  readonly values: Record<string, unknown>;
  /** The gateway's values beside its real-node placement. */
  readonly gateway?: Record<string, unknown>;
}

export async function installChartOnRealNode(o: ChartInstallOptions): Promise<ChartOnRealNode> {
  const clock = Date.now();
  const [image, modelLocal, plane] = await Promise.all([
    buildImage({ contextDir: REPO_ROOT, name: LOCAL_IMAGE_NAME }),
    ensureModelServerImage('vertex-sklearn'),
    startRealNodeCluster(o.name),
  ]);
  console.log(`[${o.name}] image build ${image.seconds.toFixed(0)} s; images and real-node cluster ready after ${((Date.now() - clock) / 1000).toFixed(0)} s`);
  try {
    return await install(o, image, modelLocal, plane);
  } catch (err) {
    // Nobody else holds the plane yet: the real node is released here, not left to the next run's clean-up.
    await plane.stop();
    throw err;
  }
}

async function install(o: ChartInstallOptions, image: BuiltImage, modelLocal: string, plane: ControlPlane): Promise<ChartOnRealNode> {
  const k = async (args: string[], input?: string): Promise<string> => {
    const r = await kubectl(args, { kubeconfig: plane.kubeconfigPath, kubectl: plane.kubectl, timeoutMs: 300_000, ...(input === undefined ? {} : { input }) });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  const pushing = Date.now();
  await mkdir(imageLogDir(), { recursive: true });
  const pushLog = join(imageLogDir(), `push-${o.name}.log`);
  const operatorImage = published(await publishToNodeRegistry(image.id, pushLog, `endpoint-operator:${image.id.slice(0, 12)}`));
  const modelImage = published(await publishToNodeRegistry(modelLocal, pushLog, `vertex-sklearn:${modelLocal.split(':').pop() ?? 'latest'}`));
  console.log(`[${o.name}] pushed ${operatorImage.ref} and ${modelImage.ref} in ${((Date.now() - pushing) / 1000).toFixed(1)} s`);

  for (const ns of o.namespaces) await k(['create', 'namespace', ns]);
  const values = {
    image: { repository: operatorImage.repository, tag: operatorImage.tag, pullPolicy: 'IfNotPresent' },
    ...ON_REAL_NODE,
    ...o.values,
    gateway: { ...ON_REAL_NODE, ...o.gateway },
  };
  const dir = await mkdtemp(join(tmpdir(), 'eo-chart-values-'));
  try {
    await writeFile(join(dir, 'values.yaml'), yaml.dump(values));
    const helm = await ensureHelm(4);
    const installing = Date.now();
    const args = ['install', 'endpoint-operator', CHART, '-n', 'default', '-f', join(dir, 'values.yaml'), '--wait', '--timeout', '5m'];
    const out = await helmOn(helm, plane.kubeconfigPath, args, 360_000);
    if (!out.stdout.includes('STATUS: deployed')) throw new Error(`helm install did not deploy: ${out.stdout}\n${out.stderr}`);
    console.log(`[${o.name}] helm install → every pod Ready: ${((Date.now() - installing) / 1000).toFixed(1)} s`);
    // The gateway's Deployment names no replica count: created at one, its HPA raises it to minReplicas within a sync period.
    const minReplicas = DEFAULT_DEPLOY_VALUES.gateway.autoscaling.minReplicas;
    await k(['wait', '--for=jsonpath={.status.readyReplicas}=' + String(minReplicas), '--timeout=120s', '-n', NS, `deployment/${GATEWAY_NAME}`]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // The catalogue a cluster edits to describe its nodes: here the real node's machine type is the default.
  const catalogue = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: MACHINE_TYPES_CONFIGMAP, namespace: NS }, data: { [MACHINE_TYPES_KEY]: JSON.stringify(REAL_NODE_CATALOGUE) } };
  await k(['apply', '--server-side', '--force-conflicts', '--field-manager=chart-test', '-f', '-'], JSON.stringify(catalogue));
  const gatewayCa = async (): Promise<string> => {
    const tls = JSON.parse(await k(['get', 'secret', DEFAULT_DEPLOY_VALUES.gateway.tls.secretName, '-n', NS, '-o', 'json'])) as { data: Record<string, string> };
    return Buffer.from(tls.data['ca.crt'] ?? '', 'base64').toString();
  };
  return { image, operatorImage, modelImage, plane, k, gatewayCa };
}
