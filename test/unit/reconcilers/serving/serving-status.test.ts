import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/api/common/kube-object.js';
import { REASON_READING } from '../../../../src/api/common/conditions.js';
import {
  exitOf,
  lastLines,
  observeServing,
  oomKill,
  type ServingWorld,
} from '../../../../src/reconcilers/serving/serving-status.js';

function deployment(status: Record<string, unknown>, generation = 1): KubeObject {
  return { metadata: { name: 'dm-x', generation }, status: { observedGeneration: 1, ...status } };
}

function pod(name: string, status: Record<string, unknown>): KubeObject {
  return { metadata: { name }, status };
}

const scheduled = { type: 'PodScheduled', status: 'True' };
const world = (w: Partial<ServingWorld>): ServingWorld => ({
  replicas: { min: 2, max: 2, required: 2 },
  deploymentName: 'dm-x',
  deployment: undefined,
  pods: [],
  machineProblem: undefined,
  ...w,
});

describe('serving status', () => {
  it('is Ready only when the required replicas are available in a Deployment that observed its latest spec', () => {
    expect(
      observeServing(world({ deployment: deployment({ replicas: 2, availableReplicas: 2 }) })).verdict,
    ).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(
      observeServing(
        world({
          replicas: { min: 3, max: 3, required: 2 },
          deployment: deployment({ replicas: 3, availableReplicas: 2 }),
        }),
      ).verdict.status,
    ).toBe('True');
    // A scale-up not yet observed by the Deployment controller: the old count proves nothing.
    expect(
      observeServing(world({ deployment: deployment({ replicas: 2, availableReplicas: 2 }, 2) })).verdict,
    ).toMatchObject({
      status: 'False',
      reason: 'ReplicasStarting',
      message: expect.stringContaining('has not observed its latest spec'),
    });
    expect(observeServing(world({})).verdict).toMatchObject({
      reason: 'ReplicasStarting',
      message: 'creating Deployment "dm-x"',
    });
  });

  it('names the worst pod: unschedulable, image pull, crash loop are Stalled reasons; a starting pod is ReplicasStarting', () => {
    const d = deployment({ replicas: 2, availableReplicas: 1 });
    const ready = pod('p0', { phase: 'Running', conditions: [scheduled, { type: 'Ready', status: 'True' }] });
    const starting = pod('p1', { phase: 'Running', conditions: [scheduled, { type: 'Ready', status: 'False' }] });
    expect(observeServing(world({ deployment: d, pods: [ready, starting] }))).toMatchObject({
      stage: 'STARTING_MODEL_SERVER',
      verdict: {
        reason: 'ReplicasStarting',
        message: '1 of 2 required replica(s) available; pod p1 is running, not ready yet (startup or readiness probe)',
      },
    });
    const unschedulable = pod('p2', {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/2 nodes are available: 2 Insufficient nvidia.com/gpu.',
        },
      ],
    });
    expect(observeServing(world({ deployment: d, pods: [ready, starting, unschedulable] }))).toMatchObject({
      stage: 'ADDING_NODES_TO_CLUSTER',
      verdict: {
        reason: 'Unschedulable',
        message: expect.stringContaining(
          'pod p2 cannot be scheduled: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.',
        ),
      },
    });
    const pull = pod('p3', {
      phase: 'Pending',
      conditions: [scheduled],
      containerStatuses: [{ state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }],
    });
    expect(observeServing(world({ deployment: d, pods: [pull] })).verdict).toMatchObject({
      reason: 'ImagePullBackOff',
      message: expect.stringContaining('pod p3: the image cannot be pulled (ErrImagePull): not found'),
    });
    const crash = pod('p4', {
      phase: 'Running',
      conditions: [scheduled],
      containerStatuses: [{ restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } } }],
    });
    expect(observeServing(world({ deployment: d, pods: [crash] })).verdict).toMatchObject({
      reason: 'CrashLoopBackOff',
      message: expect.stringContaining('5 restarts'),
    });
  });

  it("reads a crash loop from the exits themselves, as Kubernetes 1.37's kubelet reports it between restarts", () => {
    const d = deployment({ replicas: 1, availableReplicas: 0 });
    const exit = { terminated: { exitCode: 1, reason: 'Error', finishedAt: '2026-11-28T03:00:00Z' } };
    const running = pod('p0', { phase: 'Running', conditions: [scheduled] });
    // The states one crashing container passes through, as a real kubelet wrote them.
    const states: Record<string, unknown>[] = [
      { restartCount: 0, ready: false, state: exit },
      { restartCount: 2, ready: false, state: exit, lastState: exit },
      { restartCount: 2, ready: false, state: { running: {} }, lastState: exit },
      { restartCount: 3, ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: exit },
    ];
    for (const status of states) {
      const crashing = { ...running, status: { ...(running.status as object), containerStatuses: [status] } };
      expect(observeServing(world({ deployment: d, pods: [crashing] }))).toMatchObject({
        stage: 'STARTING_MODEL_SERVER',
        verdict: {
          status: 'False',
          reason: 'CrashLoopBackOff',
          message: expect.stringContaining('last exit code 1 (Error)'),
        },
      });
    }
    // Its artifact an image volume: the condition says where to look when the runtime mounted nothing.
    const withVolume: KubeObject = {
      metadata: { name: 'p0' },
      spec: {
        nodeName: 'node-a',
        volumes: [{ name: 'model-artifact', image: { reference: 'registry:5000/demo-models/iris:1' } }],
      },
      status: { ...(running.status as object), containerStatuses: [states[3]] },
    };
    expect(observeServing(world({ deployment: d, pods: [withVolume] })).verdict.message).toContain(
      "its artifact is the image volume registry:5000/demo-models/iris:1: if the files are missing, the node's container runtime may lack image volumes (containerd before 2.1, CRI-O before 1.31 mount an empty directory): kubectl get node node-a -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}'",
    );
    expect(observeServing(world({ deployment: d, pods: [{ ...withVolume, spec: {} }] })).verdict.message).not.toContain(
      'image volume',
    );
    // A server that restarted once and is ready again is not crashing; one never started is not either.
    expect(exitOf({ restartCount: 1, ready: true, state: { running: {} }, lastState: exit })).toBeUndefined();
    expect(exitOf({ restartCount: 0, ready: false, state: { waiting: { reason: 'ContainerCreating' } } })).toBe(
      undefined,
    );
    expect(exitOf({ restartCount: 4, ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } })).toBe(
      'last exit unknown',
    );
    expect(
      exitOf({ ready: false, state: { terminated: { exitCode: 137, reason: 'OOMKilled', message: ' killed\n' } } }),
    ).toBe('last exit code 137 (OOMKilled): killed');
  });

  it('says OOMKilled with the memory limit of the pod spec, a Stalled reason kstatus reads as Failed', () => {
    const d = deployment({ replicas: 2, availableReplicas: 0 });
    const oom = { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2026-11-29T03:00:00Z' } };
    const spec = {
      containers: [
        { name: 'sidecar', resources: { limits: { memory: '1Gi' } } },
        { name: 'model-server', resources: { limits: { memory: '64Mi' } } },
      ],
    };
    // Between restarts, restarting, and backing off: the same verdict each time.
    for (const status of [
      { name: 'model-server', restartCount: 1, ready: false, state: oom },
      { name: 'model-server', restartCount: 2, ready: false, state: { running: {} }, lastState: oom },
      {
        name: 'model-server',
        restartCount: 3,
        ready: false,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: oom,
      },
    ]) {
      const killed: KubeObject = {
        metadata: { name: 'p0' },
        spec,
        status: { phase: 'Running', conditions: [scheduled], containerStatuses: [status] },
      };
      expect(oomKill(killed, status)).toBe('64Mi');
      expect(observeServing(world({ deployment: d, pods: [killed] })).verdict).toEqual({
        status: 'False',
        reason: 'OOMKilled',
        message: `0 of 2 required replica(s) available; pod p0: the model server was killed for exceeding its memory limit of 64Mi (OOMKilled, ${status.restartCount} restarts): give it a machine type with more memory (spec.dedicatedResources.machineSpec.machineType)`,
      });
    }
    expect(REASON_READING.OOMKilled).toMatchObject({ ready: 'False', progress: 'Stalled', kstatus: 'Failed' });
    // Another exit is a crash loop, not an out-of-memory kill.
    const crashed = { name: 'model-server', ready: false, state: { terminated: { exitCode: 137, reason: 'Error' } } };
    expect(oomKill({ metadata: { name: 'p1' }, spec }, crashed)).toBeUndefined();
  });

  it("quotes the last lines of a crashed server's termination message (its log's end, FallbackToLogsOnError)", () => {
    const log = [
      ...Array.from({ length: 30 }, (_, i) => `INFO loading shard ${i}`),
      'Traceback (most recent call last):',
      '  File "/srv/server.py", line 3, in <module>',
      'FileNotFoundError: /models/iris/model.joblib',
      '',
    ].join('\n');
    const quoted = lastLines(log);
    expect(quoted.split('\n')).toHaveLength(10);
    expect(quoted.endsWith('FileNotFoundError: /models/iris/model.joblib')).toBe(true);
    expect(quoted.startsWith('INFO loading shard 23')).toBe(true);
    const exited = exitOf({ ready: false, state: { terminated: { exitCode: 1, reason: 'Error', message: log } } });
    expect(exited).toBe(`last exit code 1 (Error): ${quoted}`);
    // A long line is cut from its start: the end holds the cause.
    const long = lastLines(`${'x'.repeat(3000)} the cause`);
    expect(long).toHaveLength(1025);
    expect(long.endsWith('the cause')).toBe(true);
  });

  it('is DeploymentTimeout once the progress deadline passed, and MachineTypeUnknown before anything else', () => {
    const late = deployment({
      replicas: 2,
      availableReplicas: 0,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "x" has timed out progressing.',
        },
      ],
    });
    expect(observeServing(world({ deployment: late })).verdict).toMatchObject({
      status: 'False',
      reason: 'DeploymentTimeout',
      message: expect.stringContaining(
        'containerSpec.deploymentTimeout passed with 0 of 2 required replica(s) available',
      ),
    });
    expect(
      observeServing(world({ deployment: late, machineProblem: 'machine type "z" is not in the machine catalogue' }))
        .verdict,
    ).toMatchObject({ reason: 'MachineTypeUnknown' });
  });

  it('is ArtifactBucketUnmapped (PREPARING_MODEL) while the artifact cannot be served, whatever a Deployment shows', () => {
    const problem = 'bucket "crm-ml-models" is not in the bucket map';
    for (const d of [undefined, deployment({ replicas: 2, availableReplicas: 2 })])
      expect(observeServing(world({ deployment: d, artifactProblem: problem }))).toMatchObject({
        stage: 'PREPARING_MODEL',
        verdict: { status: 'False', reason: 'ArtifactBucketUnmapped', message: problem },
      });
  });
});
