/**
 * A real Informer over an in-memory source: `list` answers the given objects, `push` delivers watch
 * events. For unit tests and benches of code that reads informer caches (no API server involved).
 */
import { Informer, type ListerWatcher } from '../../src/kube/informer.js';
import type { KubeObject, WatchEvent } from '../../src/api/common/kube-object.js';

export interface StaticInformer {
  readonly informer: Informer;
  /** Starts the informer and waits for its initial list and its watch. */
  start(): Promise<void>;
  /** Delivers one watch event (ADDED, MODIFIED, DELETED) as the API server would. */
  push(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void;
  stop(): void;
}

export function staticInformer(name: string, objects: readonly KubeObject[]): StaticInformer {
  let deliver: ((e: WatchEvent<KubeObject>) => void) | undefined;
  let rv = 1;
  const source: ListerWatcher<KubeObject> = {
    list: () => Promise.resolve({ items: [...objects], resourceVersion: String(rv) }),
    watch: (_opts, onEvent, signal, onOpen) =>
      new Promise<void>((resolve) => {
        deliver = onEvent;
        onOpen?.();
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
  };
  const informer = new Informer(source, { name });
  const stopping = new AbortController();
  return {
    informer,
    start: async () => {
      void informer.run(stopping.signal);
      await informer.waitForSync(stopping.signal);
      // The watch opens right after the list; events pushed before that would have no receiver.
      while (deliver === undefined) await new Promise((r) => setImmediate(r));
    },
    push: (type, obj) => {
      rv++;
      const object = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
      if (deliver === undefined) throw new Error(`${name}: the watch has not started`);
      deliver({ type, object });
    },
    stop: () => stopping.abort(),
  };
}
