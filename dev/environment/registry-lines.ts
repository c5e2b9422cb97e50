/**
 * The lines `npm start` prints about the registry lookup: a working `curl …:resolve` with a filter
 * built from the examples it applied, the same through the CLI, and where the DNS projection shows.
 * Pure, so dev.ts only calls it with the gateway's URL and the objects it applied.
 */
import { isRecord, type KubeObject } from '../../src/api/common/kube-object.js';
import { dnsServiceName } from '../../src/reconcilers/registry-dns-plan.js';

function stringAt(obj: unknown, key: string): string | undefined {
  return isRecord(obj) && typeof obj[key] === 'string' ? obj[key] : undefined;
}

/** Quotes a value for the filter language when it is not a bare word. */
function filterValue(v: string): string {
  return /^[^\s()"'<>=!:]+$/.test(v) ? v : JSON.stringify(v);
}

/** The resolve call the lines print (the service with a DNS opt-in first), or undefined when no example has one. */
export function demoResolveCall(
  gatewayUrl: string,
  objects: readonly KubeObject[],
):
  | { url: string; body: { maxEndpoints: number; endpointFilter: string }; service: KubeObject; name: string }
  | undefined {
  const services = objects.filter((o) => o.kind === 'RegistryService');
  const service =
    services.find((s) => isRecord(s.spec) && isRecord(s.spec.dns) && s.spec.dns.enabled === true) ?? services[0];
  const name = stringAt(service?.spec, 'name');
  if (service === undefined || name === undefined) return undefined;
  const endpoint = objects.find(
    (o) => o.kind === 'RegistryEndpoint' && (stringAt(o.spec, 'name') ?? '').startsWith(`${name}/endpoints/`),
  );
  const spec = isRecord(endpoint?.spec) ? endpoint.spec : {};
  const annotations = isRecord(spec.annotations) ? spec.annotations : isRecord(spec.metadata) ? spec.metadata : {};
  const [key, value] =
    Object.entries(annotations).find(([k, v]) => typeof v === 'string' && !k.includes('endpoint-operator.')) ?? [];
  const filter = key !== undefined && typeof value === 'string' ? `annotations.${key}=${filterValue(value)}` : 'port>0';
  return { url: `${gatewayUrl}/v1/${name}:resolve`, body: { maxEndpoints: 10, endpointFilter: filter }, service, name };
}

/** `authHeader`: the curl option that sends the caller's token (printed when the gateway authenticates). */
export function registryLookupLines(
  gatewayUrl: string,
  objects: readonly KubeObject[],
  namespace: string,
  authHeader = '',
): string[] {
  const call = demoResolveCall(gatewayUrl, objects);
  if (call === undefined) return [];
  const { service, name } = call;
  const filter = call.body.endpointFilter;
  const body = JSON.stringify(call.body);
  const lines = [
    '',
    `Registry lookup (Service Directory's REST API): ${gatewayUrl}`,
    `  curl -s -X POST '${call.url}' -H 'content-type: application/json'${authHeader === '' ? '' : ` ${authHeader}`} \\`,
    `    -d '${body.replaceAll("'", "'\\''")}'`,
    `  endpoint-operator resolve ${name} --filter '${filter.replaceAll("'", "'\\''")}'`,
  ];
  if (isRecord(service.spec) && isRecord(service.spec.dns) && service.spec.dns.enabled === true) {
    const svc = dnsServiceName(name);
    lines.push(
      `  In cluster DNS as ${svc}.${service.metadata.namespace ?? namespace}.svc: kubectl get service,endpointslices -n ${service.metadata.namespace ?? namespace} -l kubernetes.io/service-name=${svc}`,
    );
  }
  return lines;
}
