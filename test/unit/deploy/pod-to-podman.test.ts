/** The podman command lines the image tests run, derived from the committed Deployments. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { DEPLOY_FILE } from '../../../src/deploy/write.js';
import { REPO_ROOT } from '../../support/examples.js';
import { movePorts, podmanRunPlan, quantityBytes, SERVICE_ACCOUNT_MOUNT } from '../../support/pod-to-podman.js';

const objects = yaml.loadAll(readFileSync(join(REPO_ROOT, DEPLOY_FILE), 'utf8')) as Array<{ kind?: string; metadata?: { name?: string } }>;
const find = (name: string): unknown => objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === name);
const containerArgs = (name: string): string[] =>
  (find(name) as { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }).spec.template.spec.containers[0]?.args ?? [];

const opts = {
  image: 'localhost/endpoint-operator:dev',
  podName: 'endpoint-operator-a',
  hostPorts: new Map([[9443, 40001], [8080, 40002], [8081, 40003], [8090, 40004], [8091, 40005]]),
  serviceAccountDir: '/tmp/sa',
  secretDirs: new Map([['endpoint-operator-gateway-tls', '/tmp/gateway-tls']]),
  apiserver: { host: '127.0.0.1', port: 6443 },
};

describe('podmanRunPlan of deploy/endpoint-operator.yaml', () => {
  it('runs the operator with its args (ports moved), user, read-only root, dropped capabilities and /tmp tmpfs', () => {
    const plan = podmanRunPlan(find('endpoint-operator'), 'operator', { ...opts, extraArgs: ['--webhook-url-host=127.0.0.1'] });
    expect(plan.args).toEqual(['run', '--project={namespace}', '--location=us-central1', '--gateway-tls-issuer=operator', '--gateway-tls-secret=endpoint-operator-gateway-tls', '--reserved-prefix=endpoint-operator.dev', '--reserved-prefix=endpoint-operator.io', '--leader-elect=true', '--webhook-port=40001', '--metrics-port=40002', '--health-port=40003', '--machine-catalogue=endpoint-operator-machine-types', '--model-network-policy=true', '--webhook-url-host=127.0.0.1']);
    const run = plan.runArgs.join(' ');
    for (const part of ['--user 65532:65532', '--read-only --read-only-tmpfs=false', '--security-opt no-new-privileges', '--cap-drop ALL', `--memory ${256 * 1024 * 1024}`, '--stop-timeout 30', `--tmpfs /tmp:rw,nosuid,nodev,mode=1777,size=${64 * 1024 * 1024}`, `--volume /tmp/sa:${SERVICE_ACCOUNT_MOUNT}:ro`, '--env POD_NAMESPACE=endpoint-operator-system', '--env POD_NAME=endpoint-operator-a', '--env KUBERNETES_SERVICE_PORT=6443', '--network host']) {
      expect(run).toContain(part);
    }
    expect(plan.readinessUrl).toBe('http://127.0.0.1:40003/readyz');
    expect(plan.serviceAccountName).toBe('endpoint-operator');
    expect(plan.runArgs.indexOf(opts.image)).toBe(plan.runArgs.length - plan.args.length - 1);
  });

  it('runs the gateway under its own service account', () => {
    const plan = podmanRunPlan(find('endpoint-operator-gateway'), 'gateway', opts);
    // The ports moved; every other argument (auth, project) exactly as the Deployment gives it.
    expect(plan.args.slice(0, 3)).toEqual(['gateway', '--port=40004', '--health-port=40005']);
    expect(plan.args.slice(3)).toEqual(containerArgs('endpoint-operator-gateway').filter((a) => !/^--(health-)?port=/.test(a)).slice(1));
    expect(plan.args).toContain('--auth=token-review');
    expect(plan.serviceAccountName).toBe('endpoint-operator-gateway');
    expect(plan.ports.get('http')).toBe(40004);
    // Its certificate Secret, from the directory the caller filled, read-only where the chart mounts it.
    expect(plan.runArgs.join(' ')).toContain('--volume /tmp/gateway-tls:/etc/endpoint-operator/gateway-tls:ro');
    expect(() => podmanRunPlan(find('endpoint-operator-gateway'), 'gateway', { ...opts, secretDirs: new Map() })).toThrow(/Secret endpoint-operator-gateway-tls: give its directory/);
  });

  it('refuses a pod field it does not reproduce, naming it', () => {
    const d = structuredClone(find('endpoint-operator')) as { spec: { template: { spec: { hostPID?: boolean } } } };
    d.spec.template.spec.hostPID = true;
    expect(() => podmanRunPlan(d, 'operator', opts)).toThrow(/spec\.template\.spec: Unrecognized key: "hostPID"/);
  });
});

describe('movePorts', () => {
  it('refuses a containerPort that no argument sets', () => {
    expect(() => movePorts(['run'], [{ name: 'webhook', containerPort: 9443 }], new Map([[9443, 1]]))).toThrow(/containerPort 9443 \(webhook\) is set by no argument/);
  });
});

describe('quantityBytes', () => {
  it('reads binary and decimal suffixes', () => {
    expect(quantityBytes('64Mi')).toBe(67108864);
    expect(quantityBytes('1G')).toBe(1e9);
    expect(() => quantityBytes('1.5Gi')).toThrow(/unsupported/);
  });
});
