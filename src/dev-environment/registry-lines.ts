/**
 * The lines `npm start` prints about the registry lookup: a working `curl …:resolve` with a filter
 * built from the examples it applied, the same through the CLI, and where the DNS projection shows.
 * Pure, so dev.ts only calls it with the gateway's URL and the objects it applied.
 */
import { isRecord, type KubeObject } from '../runtime/kube-object.js';
import { dnsServiceName } from '../reconcilers/registry-dns-plan.js';

function stringAt(obj: unknown, key: string): string | undefined {
  return isRecord(obj) && typeof obj[key] === 'string' ? obj[key] : undefined;
}

/** Quotes a value for the filter language when it is not a bare word. */
function filterValue(v: string): string {
  return /^[^\s()"'<>=!:]+$/.test(v) ? v : JSON.stringify(v);
}

export function registryLookupLines(gatewayUrl: string, objects: readonly KubeObject[], namespace: string): string[] {
  const services = objects.filter((o) => o.kind === 'RegistryService');
  const service = services.find((s) => isRecord(s.spec) && isRecord(s.spec.dns) && s.spec.dns.enabled === true) ?? services[0];
  const name = stringAt(service?.spec, 'name');
  if (service === undefined || name === undefined) return [];
  const endpoint = objects.find((o) => o.kind === 'RegistryEndpoint' && (stringAt(o.spec, 'name') ?? '').startsWith(`${name}/endpoints/`));
  const spec = isRecord(endpoint?.spec) ? endpoint.spec : {};
  const annotations = isRecord(spec.annotations) ? spec.annotations : isRecord(spec.metadata) ? spec.metadata : {};
  const [key, value] = Object.entries(annotations).find(([k, v]) => typeof v === 'string' && !k.includes('endpoint-operator.')) ?? [];
  const filter = key !== undefined && typeof value === 'string' ? `annotations.${key}=${filterValue(value)}` : 'port>0';
  const body = JSON.stringify({ maxEndpoints: 10, endpointFilter: filter });
  const lines = [
    '',
    `Registry lookup (Service Directory's REST API): ${gatewayUrl}`,
    `  curl -s -X POST '${gatewayUrl}/v1/${name}:resolve' -H 'content-type: application/json' \\`,
    `    -d '${body.replaceAll("'", "'\\''")}'`,
    `  endpoint-operator resolve ${name} --filter '${filter.replaceAll("'", "'\\''")}'`,
  ];
  if (isRecord(service.spec) && isRecord(service.spec.dns) && service.spec.dns.enabled === true) {
    const svc = dnsServiceName(name);
    lines.push(`  In cluster DNS as ${svc}.${service.metadata.namespace ?? namespace}.svc: kubectl get service,endpointslices -n ${service.metadata.namespace ?? namespace} -l kubernetes.io/service-name=${svc}`);
  }
  return lines;
}
