import { Informer, kubeListerWatcher, type Selectors } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../../api/common/kube-object.js';
import type { Logger } from '../../base/logger.js';
import { IdentityIndex } from '../identity-index.js';
import { PASSWORD_SECRET_LABEL } from '../passwords.js';
import { posResources } from './resources.js';

export interface KubernetesDirectoryOptions {
  readonly client: KubeClient;
  /** The namespace whose Shops, ShopUsers, AdminUsers and Secrets are served. */
  readonly namespace: string;
  /** The Secret watch; default the password Secrets only (label `pos.endpoint-operator.dev/password=true`). */
  readonly secretSelectors?: Selectors;
  readonly logger?: Logger;
}

/**
 * The IdentityDirectory of a namespace, fed by four informers (list + watch). Every read is answered
 * from memory, so a login never waits on the apiserver, and every change (a disabled user, a removed
 * membership, a new password) reaches the index as soon as the watch delivers it.
 */
export class KubernetesIdentityDirectory {
  readonly index = new IdentityIndex();
  readonly shops: Informer;
  readonly shopUsers: Informer;
  readonly adminUsers: Informer;
  readonly secrets: Informer;
  readonly namespace: string;

  constructor(options: KubernetesDirectoryOptions) {
    this.namespace = options.namespace;
    const make = (ref: ResourceRef, name: string, selectors: Selectors = {}): Informer =>
      new Informer(kubeListerWatcher(options.client, ref, options.namespace, selectors), {
        name: `${name} in ${options.namespace}`,
        ...(options.logger ? { logger: options.logger } : {}),
      });
    this.shops = make(posResources.shops, 'shops');
    this.shopUsers = make(posResources.shopUsers, 'shopusers');
    this.adminUsers = make(posResources.adminUsers, 'adminusers');
    this.secrets = make(
      posResources.secrets,
      'password secrets',
      options.secretSelectors ?? { labelSelector: `${PASSWORD_SECRET_LABEL}=true` },
    );
    const idx = this.index;
    const name = (o: KubeObject): string => o.metadata.name ?? '';
    this.shops.addEventHandler({
      onAdd: (o) => idx.upsertShop(o),
      onUpdate: (_, o) => idx.upsertShop(o),
      onDelete: (o) => idx.removeShop(name(o)),
    });
    this.shopUsers.addEventHandler({
      onAdd: (o) => idx.upsertShopUser(o),
      onUpdate: (_, o) => idx.upsertShopUser(o),
      onDelete: (o) => idx.removeIdentity('ShopUser', name(o)),
    });
    this.adminUsers.addEventHandler({
      onAdd: (o) => idx.upsertAdminUser(o),
      onUpdate: (_, o) => idx.upsertAdminUser(o),
      onDelete: (o) => idx.removeIdentity('AdminUser', name(o)),
    });
    this.secrets.addEventHandler({
      onAdd: (o) => idx.upsertSecret(o),
      onUpdate: (_, o) => idx.upsertSecret(o),
      onDelete: (o) => idx.removeSecret(name(o)),
    });
  }

  /** Runs the informers until `signal` aborts; resolves once all four have listed (false if aborted first). */
  async start(signal: AbortSignal): Promise<boolean> {
    const informers = [this.shops, this.shopUsers, this.adminUsers, this.secrets];
    for (const inf of informers) void inf.run(signal);
    const synced = await Promise.all(informers.map((inf) => inf.waitForSync(signal)));
    return synced.every(Boolean);
  }
}
