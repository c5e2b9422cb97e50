/**
 * Credentials stay at the gateway: the caller's `Authorization` (its token for the gateway, replayable
 * against anything accepting that audience) and `Cookie` never reach a model server, whatever code
 * later decides to pass caller headers on (trace context, sticky keys...). The same rule as
 * kube-rbac-proxy, which drops the bearer token before proxying upstream.
 */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** `headers` itself when it holds no credential (the hot path allocates nothing), else a copy without them. */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  let clean: Record<string, string> | undefined;
  for (const name of Object.keys(headers)) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) continue;
    clean ??= { ...headers };
    delete clean[name];
  }
  return clean ?? headers;
}
