/**
 * kubeconfig files: parsing, merging and context selection with client-go's rules
 * (k8s.io/client-go/tools/clientcmd, loader.go and validation.go), without the generated API
 * client that `@kubernetes/client-node` loads with its KubeConfig (tens of MB of RSS in a pod with a 256Mi limit).
 *
 * Relative paths are resolved against the directory of the file that names them, before
 * merging, as client-go's ResolveLocalPaths does, so a merged entry keeps its own file's paths.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import yaml from 'js-yaml';
import { isRecord } from '../api/common/kube-object.js';

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

export interface KubeconfigCluster {
  readonly name: string;
  /** The kubeconfig file that defined this entry (error messages name it). */
  readonly file: string;
  readonly server: string;
  /** An absolute path. */
  readonly certificateAuthority?: string;
  readonly certificateAuthorityData?: Buffer;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
  /** `extensions[client.authentication.k8s.io/exec].extension`, passed to exec plugins that ask for cluster info. */
  readonly execExtension?: unknown;
}

export type ExecInteractiveMode = 'Never' | 'IfAvailable' | 'Always';

/** `users[].user.exec`: a client-go credential plugin (client.authentication.k8s.io). */
export interface ExecPluginConfig {
  /** An absolute path when the kubeconfig gave a path with a separator, else looked up on PATH. */
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly apiVersion: string;
  readonly installHint?: string;
  readonly provideClusterInfo: boolean;
  readonly interactiveMode: ExecInteractiveMode;
}

export interface KubeconfigUser {
  readonly name: string;
  readonly file: string;
  readonly token?: string;
  /** An absolute path; re-read while running (client-go: "the last successfully read value takes precedence over Token"). */
  readonly tokenFile?: string;
  readonly clientCertificate?: string;
  readonly clientCertificateData?: Buffer;
  readonly clientKey?: string;
  readonly clientKeyData?: Buffer;
  readonly username?: string;
  readonly password?: string;
  /** `as`, `as-uid`, `as-groups`: sent as Impersonate-* headers. */
  readonly impersonate?: { readonly user?: string; readonly uid?: string; readonly groups: readonly string[] };
  readonly exec?: ExecPluginConfig;
  /** Legacy auth providers (oidc, gcp, azure), left to client-node. */
  readonly authProvider?: { readonly name: string; readonly config: Readonly<Record<string, unknown>> };
}

export interface KubeconfigContext {
  readonly name: string;
  readonly file: string;
  readonly cluster: string;
  readonly user?: string;
  readonly namespace?: string;
}

export interface Kubeconfig {
  /** The files read, in precedence order. */
  readonly files: readonly string[];
  readonly currentContext?: { readonly name: string; readonly file: string };
  readonly clusters: ReadonlyMap<string, KubeconfigCluster>;
  readonly users: ReadonlyMap<string, KubeconfigUser>;
  readonly contexts: ReadonlyMap<string, KubeconfigContext>;
}

/** The current context with its cluster and user, checked the way client-go validates a config before use. */
export interface SelectedContext {
  readonly context: KubeconfigContext;
  readonly cluster: KubeconfigCluster;
  /** Undefined when the context names no user (anonymous, or TLS material only on the cluster). */
  readonly user?: KubeconfigUser;
}

/** Parses one kubeconfig document; `file` names it in errors and anchors its relative paths. */
export function parseKubeconfig(text: string, file: string): Kubeconfig {
  let doc: unknown;
  try {
    doc = yaml.load(text, { filename: file });
  } catch (err) {
    throw new KubeconfigError(`${file}: not valid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (doc === undefined || doc === null) doc = {};
  if (!isRecord(doc)) throw new KubeconfigError(`${file}: a kubeconfig must be a mapping (kind: Config)`);
  const fields = new Fields(file, dirname(resolve(file)));
  const currentContext = fields.optionalString(doc, 'current-context', 'current-context');
  return {
    files: [file],
    ...(currentContext !== undefined && currentContext !== ''
      ? { currentContext: { name: currentContext, file } }
      : {}),
    clusters: fields.namedList(doc, 'clusters', 'cluster', (body, at, name) => fields.cluster(body, at, name)),
    users: fields.namedList(doc, 'users', 'user', (body, at, name) => fields.user(body, at, name)),
    contexts: fields.namedList(doc, 'contexts', 'context', (body, at, name) => fields.context(body, at, name)),
  };
}

/**
 * client-go's merge of a precedence list ($KUBECONFIG): the first file that sets a map key
 * (a cluster, user or context name) wins and later files never change that entry; the
 * current-context comes from the first file that sets one.
 */
export function mergeKubeconfigs(configs: readonly Kubeconfig[]): Kubeconfig {
  const clusters = new Map<string, KubeconfigCluster>();
  const users = new Map<string, KubeconfigUser>();
  const contexts = new Map<string, KubeconfigContext>();
  let currentContext: Kubeconfig['currentContext'];
  for (const config of configs) {
    currentContext ??= config.currentContext;
    for (const [name, entry] of config.clusters) if (!clusters.has(name)) clusters.set(name, entry);
    for (const [name, entry] of config.users) if (!users.has(name)) users.set(name, entry);
    for (const [name, entry] of config.contexts) if (!contexts.has(name)) contexts.set(name, entry);
  }
  return {
    files: configs.flatMap((c) => c.files),
    ...(currentContext ? { currentContext } : {}),
    clusters,
    users,
    contexts,
  };
}

/**
 * Reads and merges `files`. Like client-go, a file of the $KUBECONFIG list that does not exist is
 * skipped (`mustExist: false`), but at least one must exist; an explicit --kubeconfig must exist.
 */
export function readKubeconfigFiles(files: readonly string[], options: { mustExist: boolean }): Kubeconfig {
  const configs: Kubeconfig[] = [];
  for (const file of files) {
    if (file === '') continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if (!options.mustExist && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new KubeconfigError(`cannot read kubeconfig ${file}: ${(err as Error).message}`);
    }
    configs.push(parseKubeconfig(text, file));
  }
  if (configs.length === 0)
    throw new KubeconfigError(`none of the kubeconfig files exists: ${files.filter((f) => f !== '').join(', ')}`);
  return mergeKubeconfigs(configs);
}

/** The context named `contextName` (default: current-context), its cluster and user, with client-go's consistency checks. */
export function selectContext(config: Kubeconfig, contextName?: string): SelectedContext {
  const where = config.files.join(', ');
  const name = contextName ?? config.currentContext?.name;
  if (name === undefined) throw new KubeconfigError(`${where}: no current-context is set (and no context was chosen)`);
  const context = config.contexts.get(name);
  if (!context) {
    const origin =
      contextName === undefined && config.currentContext
        ? `current-context of ${config.currentContext.file}`
        : 'the chosen context';
    throw new KubeconfigError(
      `${where}: context "${name}" (${origin}) is not defined; contexts: ${[...config.contexts.keys()].join(', ') || 'none'}`,
    );
  }
  const cluster = config.clusters.get(context.cluster);
  if (!cluster)
    throw new KubeconfigError(
      `${context.file}: contexts[${name}].context.cluster names cluster "${context.cluster}", which is not defined in ${where}`,
    );
  let user: KubeconfigUser | undefined;
  if (context.user !== undefined) {
    user = config.users.get(context.user);
    if (!user)
      throw new KubeconfigError(
        `${context.file}: contexts[${name}].context.user names user "${context.user}", which is not defined in ${where}`,
      );
    validateUser(user);
  }
  validateCluster(cluster);
  return { context, cluster, ...(user ? { user } : {}) };
}

function validateCluster(c: KubeconfigCluster): void {
  const at = `${c.file}: clusters[${c.name}].cluster`;
  if (c.certificateAuthority !== undefined && c.certificateAuthorityData !== undefined) {
    throw new KubeconfigError(`${at}: certificate-authority and certificate-authority-data are both set; keep one`);
  }
  if (c.insecureSkipTlsVerify && (c.certificateAuthority !== undefined || c.certificateAuthorityData !== undefined)) {
    throw new KubeconfigError(
      `${at}: insecure-skip-tls-verify with a certificate authority is not allowed (client-go refuses it too); remove one`,
    );
  }
  if (c.proxyUrl !== undefined) {
    // client-go also takes socks5://; this client tunnels through HTTP(S) proxies only (src/kube/README.md).
    const protocol = URL.canParse(c.proxyUrl) ? new URL(c.proxyUrl).protocol : '';
    if (protocol !== 'http:' && protocol !== 'https:')
      throw new KubeconfigError(
        `${at}.proxy-url: ${JSON.stringify(c.proxyUrl)} is not an http:// or https:// URL (the proxies endpoint-operator supports; socks5 is not)`,
      );
  }
}

function validateUser(u: KubeconfigUser): void {
  const at = `${u.file}: users[${u.name}].user`;
  const hasToken = u.token !== undefined || u.tokenFile !== undefined;
  const hasBasic = u.username !== undefined || u.password !== undefined;
  if (hasToken && hasBasic)
    throw new KubeconfigError(`${at}: more than one authentication method (token and username/password); keep one`);
  if (u.exec && u.authProvider) throw new KubeconfigError(`${at}: exec and auth-provider cannot both be set`);
  if (u.clientCertificate !== undefined && u.clientCertificateData !== undefined) {
    throw new KubeconfigError(`${at}: client-certificate and client-certificate-data are both set; keep one`);
  }
  if (u.clientKey !== undefined && u.clientKeyData !== undefined)
    throw new KubeconfigError(`${at}: client-key and client-key-data are both set; keep one`);
  const hasCert = u.clientCertificate !== undefined || u.clientCertificateData !== undefined;
  const hasKey = u.clientKey !== undefined || u.clientKeyData !== undefined;
  if (hasCert !== hasKey)
    throw new KubeconfigError(
      `${at}: ${hasCert ? 'client-key or client-key-data' : 'client-certificate or client-certificate-data'} is missing (a client certificate needs both)`,
    );
  if (u.exec?.interactiveMode === 'Always') {
    throw new KubeconfigError(
      `${at}.exec.interactiveMode: Always needs a terminal, which an operator does not have; use IfAvailable or Never`,
    );
  }
}

/** Typed reads of one file's fields, each error naming the file and the field path. */
class Fields {
  constructor(
    private readonly file: string,
    private readonly dir: string,
  ) {}

  namedList<T>(
    doc: Record<string, unknown>,
    key: string,
    bodyKey: string,
    decode: (body: Record<string, unknown>, at: string, name: string) => T,
  ): Map<string, T> {
    const out = new Map<string, T>();
    const list = doc[key];
    if (list === undefined || list === null) return out;
    if (!Array.isArray(list)) throw this.error(key, 'must be a list');
    list.forEach((item: unknown, i) => {
      if (!isRecord(item)) throw this.error(`${key}[${i}]`, 'must be a mapping');
      const name = this.optionalString(item, 'name', `${key}[${i}].name`);
      if (name === undefined || name === '') throw this.error(`${key}[${i}].name`, 'is missing');
      // client-go decodes a list with a repeated name into a map: the last one wins within one file.
      const body = item[bodyKey] ?? {};
      if (!isRecord(body)) throw this.error(`${key}[${name}].${bodyKey}`, 'must be a mapping');
      out.set(name, decode(body, `${key}[${name}].${bodyKey}`, name));
    });
    return out;
  }

  cluster(b: Record<string, unknown>, at: string, name: string): KubeconfigCluster {
    const server = this.optionalString(b, 'server', `${at}.server`);
    if (server === undefined || server === '') throw this.error(`${at}.server`, 'is missing');
    try {
      const url = new URL(server);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)');
    } catch {
      throw this.error(`${at}.server`, `must be an http(s) URL, got "${server}"`);
    }
    const extension = this.execExtension(b, at);
    return {
      name,
      file: this.file,
      server: server.replace(/\/+$/, ''),
      ...this.opt('certificateAuthority', this.optionalPath(b, 'certificate-authority', at)),
      ...this.opt('certificateAuthorityData', this.optionalBase64(b, 'certificate-authority-data', at)),
      insecureSkipTlsVerify: this.optionalBoolean(b, 'insecure-skip-tls-verify', at) ?? false,
      ...this.opt('tlsServerName', this.nonEmpty(b, 'tls-server-name', at)),
      ...this.opt('proxyUrl', this.nonEmpty(b, 'proxy-url', at)),
      ...(extension !== undefined ? { execExtension: extension } : {}),
    };
  }

  user(b: Record<string, unknown>, at: string, name: string): KubeconfigUser {
    const groups = this.optionalStringList(b, 'as-groups', at) ?? [];
    const as = this.nonEmpty(b, 'as', at);
    const asUid = this.nonEmpty(b, 'as-uid', at);
    if (b['as-user-extra'] !== undefined)
      throw this.error(`${at}.as-user-extra`, 'is not supported by endpoint-operator');
    const authProvider = b['auth-provider'];
    if (authProvider !== undefined && authProvider !== null && !isRecord(authProvider))
      throw this.error(`${at}.auth-provider`, 'must be a mapping');
    const providerName = isRecord(authProvider)
      ? this.optionalString(authProvider, 'name', `${at}.auth-provider.name`)
      : undefined;
    if (isRecord(authProvider) && !providerName) throw this.error(`${at}.auth-provider.name`, 'is missing');
    const providerConfig = isRecord(authProvider) ? (authProvider.config ?? {}) : {};
    if (!isRecord(providerConfig)) throw this.error(`${at}.auth-provider.config`, 'must be a mapping');
    return {
      name,
      file: this.file,
      ...this.opt('token', this.nonEmpty(b, 'token', at)),
      // client-go spells it tokenFile; client-node wrote token-file, so kubeconfigs it produced are read too.
      ...this.opt('tokenFile', this.optionalPath(b, 'tokenFile', at) ?? this.optionalPath(b, 'token-file', at)),
      ...this.opt('clientCertificate', this.optionalPath(b, 'client-certificate', at)),
      ...this.opt('clientCertificateData', this.optionalBase64(b, 'client-certificate-data', at)),
      ...this.opt('clientKey', this.optionalPath(b, 'client-key', at)),
      ...this.opt('clientKeyData', this.optionalBase64(b, 'client-key-data', at)),
      ...this.opt('username', this.nonEmpty(b, 'username', at)),
      ...this.opt('password', this.nonEmpty(b, 'password', at)),
      ...(as !== undefined || asUid !== undefined || groups.length > 0
        ? { impersonate: { ...this.opt('user', as), ...this.opt('uid', asUid), groups } }
        : {}),
      ...(b.exec !== undefined && b.exec !== null ? { exec: this.exec(b.exec, `${at}.exec`) } : {}),
      ...(providerName ? { authProvider: { name: providerName, config: providerConfig } } : {}),
    };
  }

  context(b: Record<string, unknown>, at: string, name: string): KubeconfigContext {
    const cluster = this.nonEmpty(b, 'cluster', at);
    if (cluster === undefined) throw this.error(`${at}.cluster`, 'is missing');
    return {
      name,
      file: this.file,
      cluster,
      ...this.opt('user', this.nonEmpty(b, 'user', at)),
      ...this.opt('namespace', this.nonEmpty(b, 'namespace', at)),
    };
  }

  private exec(raw: unknown, at: string): ExecPluginConfig {
    if (!isRecord(raw)) throw this.error(at, 'must be a mapping');
    const command = this.nonEmpty(raw, 'command', at);
    if (command === undefined) throw this.error(`${at}.command`, 'is missing');
    const apiVersion = this.nonEmpty(raw, 'apiVersion', at);
    if (apiVersion === undefined)
      throw this.error(`${at}.apiVersion`, 'is missing (client.authentication.k8s.io/v1 or v1beta1)');
    const mode = this.nonEmpty(raw, 'interactiveMode', at) ?? 'IfAvailable';
    if (mode !== 'Never' && mode !== 'IfAvailable' && mode !== 'Always')
      throw this.error(`${at}.interactiveMode`, `must be Never, IfAvailable or Always, got "${mode}"`);
    const envList = raw.env ?? [];
    if (!Array.isArray(envList)) throw this.error(`${at}.env`, 'must be a list of {name, value}');
    const env = envList.map((e: unknown, i) => {
      if (!isRecord(e) || typeof e.name !== 'string' || typeof (e.value ?? '') !== 'string')
        throw this.error(`${at}.env[${i}]`, 'must be {name, value} strings');
      return { name: e.name, value: typeof e.value === 'string' ? e.value : '' };
    });
    const installHint = this.nonEmpty(raw, 'installHint', at);
    return {
      // client-go resolves the command against the kubeconfig's directory only when it is a path, not a PATH lookup.
      command: command.includes('/') ? this.absolute(command) : command,
      args: this.optionalStringList(raw, 'args', at) ?? [],
      env,
      apiVersion,
      ...(installHint !== undefined ? { installHint } : {}),
      provideClusterInfo: this.optionalBoolean(raw, 'provideClusterInfo', at) ?? false,
      interactiveMode: mode,
    };
  }

  private execExtension(b: Record<string, unknown>, at: string): unknown {
    const list = b.extensions;
    if (list === undefined || list === null) return undefined;
    if (!Array.isArray(list)) throw this.error(`${at}.extensions`, 'must be a list of {name, extension}');
    const found: unknown = list.find((e: unknown) => isRecord(e) && e.name === 'client.authentication.k8s.io/exec');
    return isRecord(found) ? found.extension : undefined;
  }

  optionalString(b: Record<string, unknown>, key: string, path: string): string | undefined {
    const v = b[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw this.error(path, `must be a string, got ${typeof v}`);
    return v;
  }

  private nonEmpty(b: Record<string, unknown>, key: string, at: string): string | undefined {
    const v = this.optionalString(b, key, `${at}.${key}`);
    return v === '' ? undefined : v;
  }

  private optionalBoolean(b: Record<string, unknown>, key: string, at: string): boolean | undefined {
    const v = b[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw this.error(`${at}.${key}`, `must be true or false, got ${JSON.stringify(v)}`);
    return v;
  }

  private optionalStringList(b: Record<string, unknown>, key: string, at: string): string[] | undefined {
    const v = b[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))
      throw this.error(`${at}.${key}`, 'must be a list of strings');
    return v as string[];
  }

  private optionalPath(b: Record<string, unknown>, key: string, at: string): string | undefined {
    const v = this.nonEmpty(b, key, at);
    return v === undefined ? undefined : this.absolute(v);
  }

  /** `*-data` fields are []byte in client-go, so base64 in YAML. */
  private optionalBase64(b: Record<string, unknown>, key: string, at: string): Buffer | undefined {
    const v = this.nonEmpty(b, key, at);
    if (v === undefined) return undefined;
    const compact = v.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0)
      throw this.error(`${at}.${key}`, 'is not valid base64');
    return Buffer.from(compact, 'base64');
  }

  private absolute(path: string): string {
    return isAbsolute(path) ? path : resolve(this.dir, path);
  }

  private opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
    return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
  }

  private error(path: string, problem: string): KubeconfigError {
    return new KubeconfigError(`${this.file}: ${path} ${problem}`);
  }
}
