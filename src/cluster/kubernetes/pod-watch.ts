import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { Informer, type Watcher } from './informer.ts';
import { MANAGED_SELECTOR } from './pod.ts';

/**
 * One watch, per worker, of llmgw's pods in its namespace, which the pod activities wait on: a start
 * waits for its pod's next change rather than ask the API server for it every fraction of a second (200
 * starts at once would be 800 requests a second). Started at the first wait, so a worker that runs no
 * pod activity watches nothing.
 */
export class PodWatch {
  private informer: Informer<V1Pod> | null = null;
  private ready: Promise<void> | null = null;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly api: CoreV1Api,
    private readonly watcher: Watcher,
    private readonly namespace: string,
    private readonly log: Pick<Console, 'warn'> = console,
  ) {}

  /** The pod as last seen (undefined: not seen, or gone). */
  async get(name: string): Promise<V1Pod | undefined> {
    await this.start();
    return this.informer?.current().find((pod) => pod.metadata?.name === name);
  }

  /** Resolves at the next change of any of llmgw's pods, or after `ms`. */
  async changed(ms: number): Promise<void> {
    await this.start();
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiting.add(done);
    });
  }

  stop(): void {
    this.informer?.stop();
    this.informer = null;
    this.ready = null;
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const { api, namespace } = this;
    this.informer = new Informer<V1Pod>(
      `pods in ${namespace}`,
      `/api/v1/namespaces/${namespace}/pods`,
      () => api.listNamespacedPod({ namespace, labelSelector: MANAGED_SELECTOR }),
      this.watcher,
      () => {
        for (const wake of [...this.waiting]) wake();
      },
      this.log,
      { labelSelector: MANAGED_SELECTOR },
    );
    this.ready = this.informer.start();
    return this.ready;
  }
}
