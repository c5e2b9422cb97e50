/**
 * The auth client to give Google's Node clients (`@google-cloud/aiplatform`, `@google-cloud/service-directory`)
 * so they call the gateway with a Kubernetes token: a projected ServiceAccount token minted for the
 * gateway's audience (see workload.yaml). The kubelet rotates the file, so it is read again for every
 * call (a read of a small tmpfs file). Both shapes of gax's REST transport are served: gax 5 calls
 * `fetch`, gax 4 spreads what `getRequestHeaders` returns.
 */
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';

export const PROJECTED_TOKEN_PATH = '/var/run/secrets/endpoint-operator/token';

export interface BearerTokenAuth {
  getRequestHeaders(): Promise<Record<string, string>>;
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
}

/** `token`: the token itself, or a function that reads it (default: the projected token file). */
export function bearerTokenAuth(token: string | (() => string) = () => readFileSync(PROJECTED_TOKEN_PATH, 'utf8').trim()): BearerTokenAuth {
  const current = typeof token === 'string' ? () => token : token;
  return {
    getRequestHeaders: async () => ({ authorization: `Bearer ${current()}` }),
    fetch: (url, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${current()}`);
      return fetch(url, { ...init, headers });
    },
  };
}

/**
 * Client options for the gateway over gRPC, the clients' default transport, trusting the gateway's CA (the
 * ConfigMap endpoint-operator-gateway-ca.crt, mounted), e.g.
 *   new v1.PredictionServiceClient(gatewayGrpcClientOptions('https://endpoint-operator-gateway.endpoint-operator-system.svc',
 *     readFileSync('/var/run/secrets/endpoint-operator-gateway-ca/ca.crt', 'utf8')))
 * google-gax uses `sslCreds` as the channel's whole credentials, so the token rides in them (per call), not in `authClient`;
 * `null`: no token (a gateway run with --auth=none).
 */
export function gatewayGrpcClientOptions(gatewayUrl: string, caPem: string, auth: BearerTokenAuth | null = bearerTokenAuth()): { apiEndpoint: string; port: number; sslCreds: grpc.ChannelCredentials } {
  const url = new URL(gatewayUrl);
  const port = url.port === '' ? 443 : Number(url.port);
  const tls = grpc.credentials.createSsl(Buffer.from(caPem));
  const sslCreds = auth === null ? tls : grpc.credentials.combineChannelCredentials(tls, grpc.credentials.createFromGoogleCredential(auth));
  return { apiEndpoint: url.hostname, port, sslCreds };
}

/**
 * Client options for the gateway over REST (`fallback: true`: Google's HTTP/JSON), e.g.
 *   new v1.PredictionServiceClient(gatewayClientOptions('http://endpoint-operator-gateway.endpoint-operator-system.svc'))
 */
export function gatewayClientOptions(gatewayUrl: string, auth: BearerTokenAuth = bearerTokenAuth()): { apiEndpoint: string; port: number; protocol: string; fallback: true; authClient: BearerTokenAuth } {
  const url = new URL(gatewayUrl);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { apiEndpoint: url.hostname, port, protocol: url.protocol.replace(/:$/, ''), fallback: true, authClient: auth };
}
