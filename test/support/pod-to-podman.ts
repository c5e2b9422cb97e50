/**
 * Turns one container of a Deployment (as deploy/endpoint-operator.yaml declares it) into a `podman run`
 * command line that runs it as the kubelet would: its args and env, its user, a read-only root
 * filesystem, its dropped capabilities, no-new-privileges, its emptyDir volumes as tmpfs, its Secret volumes as
 * read-only bind mounts of directories the caller fills, its memory
 * limit, its grace period, and the service account the kubelet mounts. Every field of the pod template is
 * either translated or explicitly irrelevant on one host (scheduling); any other field throws, so a chart
 * change the image tests do not reproduce fails them instead of being silently dropped.
 *
 * The containers share the host's network (the kube-apiserver on loopback must reach the webhooks), so
 * each containerPort is moved to a free host port: the argument that sets it is rewritten, and a
 * containerPort no argument sets is an error.
 */
import { z } from 'zod';

const securityContext = z
  .object({
    runAsNonRoot: z.boolean().optional(),
    runAsUser: z.number().int().optional(),
    runAsGroup: z.number().int().optional(),
    readOnlyRootFilesystem: z.boolean().optional(),
    allowPrivilegeEscalation: z.boolean().optional(),
    capabilities: z
      .object({ drop: z.array(z.string()).optional(), add: z.array(z.string()).optional() })
      .strict()
      .optional(),
    seccompProfile: z
      .object({ type: z.enum(['RuntimeDefault', 'Unconfined']) })
      .strict()
      .optional(),
  })
  .strict();

const httpProbe = z
  .object({ httpGet: z.object({ path: z.string(), port: z.union([z.string(), z.number()]) }).strict() })
  .passthrough();

const container = z
  .object({
    name: z.string(),
    image: z.string(),
    imagePullPolicy: z.string().optional(),
    command: z.array(z.string()).optional(),
    args: z.array(z.string()).default([]),
    env: z
      .array(
        z
          .object({
            name: z.string(),
            value: z.string().optional(),
            valueFrom: z
              .object({ fieldRef: z.object({ fieldPath: z.enum(['metadata.namespace', 'metadata.name']) }).strict() })
              .strict()
              .optional(),
          })
          .strict(),
      )
      .default([]),
    ports: z
      .array(
        z.object({ name: z.string(), containerPort: z.number().int(), protocol: z.literal('TCP').optional() }).strict(),
      )
      .default([]),
    livenessProbe: httpProbe.optional(),
    readinessProbe: httpProbe.optional(),
    resources: z
      .object({
        requests: z.record(z.string(), z.string()).optional(),
        limits: z.record(z.string(), z.string()).optional(),
      })
      .strict()
      .optional(),
    securityContext: securityContext.optional(),
    volumeMounts: z
      .array(z.object({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() }).strict())
      .default([]),
  })
  .strict();

const deployment = z.object({
  kind: z.literal('Deployment'),
  metadata: z.object({ name: z.string(), namespace: z.string() }).passthrough(),
  spec: z
    .object({
      template: z.object({
        metadata: z.unknown().optional(),
        spec: z
          .object({
            serviceAccountName: z.string(),
            securityContext: z
              .object({ runAsNonRoot: z.boolean().optional(), seccompProfile: securityContext.shape.seccompProfile })
              .strict()
              .optional(),
            terminationGracePeriodSeconds: z.number().int().default(30),
            containers: z.array(container),
            volumes: z
              .array(
                z.union([
                  z
                    .object({
                      name: z.string(),
                      emptyDir: z.object({ sizeLimit: z.string().optional(), medium: z.string().optional() }).strict(),
                    })
                    .strict(),
                  z.object({ name: z.string(), secret: z.object({ secretName: z.string() }).strict() }).strict(),
                ]),
              )
              .default([]),
            // Where the pod is scheduled: one host here, nothing to reproduce.
            topologySpreadConstraints: z.unknown().optional(),
            affinity: z.unknown().optional(),
          })
          .strict(),
      }),
    })
    .passthrough(),
});

export type DeploymentObject = z.infer<typeof deployment>;

export const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface PodmanRunOptions {
  readonly image: string;
  /** The container's (and pod's) name: podman's --name, and metadata.name for a fieldRef. */
  readonly podName: string;
  /** containerPort → the host port it is moved to. */
  readonly hostPorts: ReadonlyMap<number, number>;
  /** A directory holding token, ca.crt and namespace, mounted where the kubelet mounts them. */
  readonly serviceAccountDir: string;
  /** What the kubelet puts in KUBERNETES_SERVICE_HOST/PORT: here, the kube-apiserver itself. */
  readonly apiserver: { readonly host: string; readonly port: number };
  /** Arguments this environment needs on top of the chart's (each one a documented difference). */
  readonly extraArgs?: readonly string[];
  /** Secret name → a directory holding its keys as files (what the kubelet writes), mounted read-only; a Secret volume without one is an error. */
  readonly secretDirs?: ReadonlyMap<string, string>;
}

export interface PodmanRunPlan {
  /** Everything after `podman run`, the image and its arguments last. */
  readonly runArgs: string[];
  /** The container's arguments after the port rewrite. */
  readonly args: string[];
  /** containerPort name → host port. */
  readonly ports: ReadonlyMap<string, number>;
  /** The readiness probe's URL on the host, if the container has an HTTP one. */
  readonly readinessUrl: string | undefined;
  readonly graceSeconds: number;
  readonly serviceAccountName: string;
}

export function parseDeployment(obj: unknown): DeploymentObject {
  const parsed = deployment.safeParse(obj);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(
      `a Deployment the image tests cannot reproduce with podman (translate the new field in test/support/pod-to-podman.ts): ${issues}`,
    );
  }
  return parsed.data;
}

/** Kubernetes quantities of bytes (Mi, Gi, M, plain) in bytes. */
export function quantityBytes(q: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(q);
  if (!m) throw new Error(`unsupported memory quantity ${JSON.stringify(q)}`);
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, K: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

/** Rewrites `--flag=PORT` arguments to the host ports; every containerPort must be set by one. */
export function movePorts(
  args: readonly string[],
  ports: readonly { name: string; containerPort: number }[],
  hostPorts: ReadonlyMap<number, number>,
): string[] {
  const out = [...args];
  for (const { name, containerPort } of ports) {
    const host = hostPorts.get(containerPort);
    if (host === undefined) throw new Error(`containerPort ${containerPort} (${name}) has no host port`);
    const i = out.findIndex((a) => /^--[a-z-]*port=\d+$/.test(a) && a.endsWith(`=${containerPort}`));
    if (i < 0)
      throw new Error(
        `containerPort ${containerPort} (${name}) is set by no argument, so it cannot be moved on the host network: pass it as a flag in the chart`,
      );
    out[i] = `${out[i]!.slice(0, out[i]!.indexOf('='))}=${host}`;
  }
  return out;
}

export function podmanRunPlan(obj: unknown, containerName: string, opts: PodmanRunOptions): PodmanRunPlan {
  const d = parseDeployment(obj);
  const pod = d.spec.template.spec;
  const c = pod.containers.find((x) => x.name === containerName);
  if (!c) throw new Error(`Deployment ${d.metadata.name} has no container ${containerName}`);
  const sc = c.securityContext ?? {};
  const runAsNonRoot = sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot ?? false;
  if (runAsNonRoot && (sc.runAsUser === undefined || sc.runAsUser === 0))
    throw new Error(`${c.name}: runAsNonRoot needs a numeric non-zero runAsUser`);
  const seccomp = sc.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type ?? 'RuntimeDefault';

  const run: string[] = ['--detach', '--name', opts.podName, '--pull', 'never', '--network', 'host'];
  if (sc.runAsUser !== undefined) run.push('--user', `${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}`);
  // podman adds writable tmpfs mounts (/tmp, /run, /var/tmp) to a read-only container unless told not to; the pod has only its volumes.
  if (sc.readOnlyRootFilesystem === true) run.push('--read-only', '--read-only-tmpfs=false');
  if (sc.allowPrivilegeEscalation === false) run.push('--security-opt', 'no-new-privileges');
  for (const cap of sc.capabilities?.drop ?? []) run.push('--cap-drop', cap);
  for (const cap of sc.capabilities?.add ?? []) run.push('--cap-add', cap);
  if (seccomp === 'Unconfined') run.push('--security-opt', 'seccomp=unconfined');
  const memory = c.resources?.limits?.['memory'];
  if (memory !== undefined) run.push('--memory', String(quantityBytes(memory)));
  run.push('--stop-timeout', String(pod.terminationGracePeriodSeconds));

  for (const mount of c.volumeMounts) {
    const volume = pod.volumes.find((v) => v.name === mount.name);
    if (!volume) throw new Error(`${c.name}: volumeMount ${mount.name} names no volume`);
    if ('secret' in volume) {
      const dir = opts.secretDirs?.get(volume.secret.secretName);
      if (dir === undefined)
        throw new Error(
          `${c.name}: volume ${volume.name} mounts Secret ${volume.secret.secretName}: give its directory in secretDirs`,
        );
      run.push('--volume', `${dir}:${mount.mountPath}:ro`);
      continue;
    }
    if (volume.emptyDir.medium !== undefined && volume.emptyDir.medium !== 'Memory')
      throw new Error(`emptyDir medium ${volume.emptyDir.medium} is not supported`);
    // An emptyDir is a fresh directory any container user can write; a tmpfs of its size limit is the same here.
    const size = volume.emptyDir.sizeLimit === undefined ? '' : `,size=${quantityBytes(volume.emptyDir.sizeLimit)}`;
    run.push('--tmpfs', `${mount.mountPath}:rw,nosuid,nodev,mode=1777${size}`);
  }
  run.push('--volume', `${opts.serviceAccountDir}:${SERVICE_ACCOUNT_MOUNT}:ro`);
  run.push(
    '--env',
    `KUBERNETES_SERVICE_HOST=${opts.apiserver.host}`,
    '--env',
    `KUBERNETES_SERVICE_PORT=${opts.apiserver.port}`,
  );
  for (const e of c.env) {
    const field = e.valueFrom?.fieldRef.fieldPath;
    const value =
      field === 'metadata.namespace' ? d.metadata.namespace : field === 'metadata.name' ? opts.podName : e.value;
    if (value === undefined) throw new Error(`${c.name}: env ${e.name} has neither a value nor a supported fieldRef`);
    run.push('--env', `${e.name}=${value}`);
  }
  if (c.command !== undefined) run.push('--entrypoint', JSON.stringify(c.command));

  const args = [...movePorts(c.args, c.ports, opts.hostPorts), ...(opts.extraArgs ?? [])];
  const ports = new Map(c.ports.map((p) => [p.name, opts.hostPorts.get(p.containerPort)!] as const));
  const probe = c.readinessProbe?.httpGet;
  const probePort =
    probe === undefined
      ? undefined
      : typeof probe.port === 'number'
        ? opts.hostPorts.get(probe.port)
        : ports.get(probe.port);
  if (probe !== undefined && probePort === undefined)
    throw new Error(`${c.name}: readinessProbe port ${probe.port} is no containerPort`);
  return {
    runArgs: [...run, opts.image, ...args],
    args,
    ports,
    readinessUrl: probe === undefined ? undefined : `http://127.0.0.1:${probePort}${probe.path}`,
    graceSeconds: pod.terminationGracePeriodSeconds,
    serviceAccountName: pod.serviceAccountName,
  };
}
