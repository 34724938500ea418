import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';
import type { ClusterDriver } from '../../domain/cluster-driver.ts';
import type { EngineLoad } from '../../domain/engine-metrics.ts';
import type { Reconcilers } from '../../reconcilers/client.ts';
import { Repeating } from '../../repeating.ts';
import { recordEvent } from '../../store/audit.ts';
import type { Sql } from '../../store/db.ts';
import {
  activeReplicaIds,
  keepKubernetesNodes,
  readyKubernetesReplicas,
  slowKubernetesStarts,
} from '../../store/kubernetes-nodes.ts';
import { applyReplicaReport } from '../../store/replica-reports.ts';
import { getReplica, modelsWaitingOn } from '../../store/replicas.ts';
import { Informer, type Watcher } from './informer.ts';
import { podName, REPLICA_LABEL } from './pod.ts';
import { statusOf } from './pod-activities.ts';
import { podEngines, type ScrapeLoad, scrapePodEngines } from './pod-metrics.ts';
import { isOurs, nodesInStep } from './room.ts';

/** A start with no pod after this long is handed to the driver again. */
const SLOW_START_MS = 10_000;

/** Who the audit log says deleted an orphan pod. */
const ACTOR = 'llmgw kubernetes driver';

/**
 * Keeps llmgw in step with a Kubernetes cluster, run by the one worker that holds the cluster lease
 * (as the simulated cluster is): an informer on the nodes and one on the pods (all namespaces: the pods
 * llmgw does not run hold room it must plan around), and every `everyMs`:
 * - the store's Kubernetes nodes written from them (room.ts), the Ready ones' heartbeats refreshed;
 * - llmgw's pods whose replica is over or unknown (a worker that died between a replica's end and its
 *   pod's deletion, a start retried after its replica was lost) deleted, each with an audit entry; the
 *   others are adopted as they are (a restart finds them by their labels and starts nothing);
 * - a ready replica whose pod was deleted or ended behind llmgw's back crashed, so it is replaced;
 * - a replica starting for some seconds without a pod handed to the driver again: a worker killed
 *   between admitting its start and starting its workflow left it so (the start is idempotent: a
 *   workflow under way is not started twice).
 * And every `scrapeMs`, when given `reportLoad`: the engines' /metrics, at their pod IPs (pod-metrics.ts).
 */
export class KubernetesSync {
  private nodes: Informer<V1Node>;
  private pods: Informer<V1Pod>;
  private readonly loop: Repeating;
  private readonly scraping: Repeating;
  /** Replicas whose last scrape failed: said once, not every period. */
  private readonly failing = new Set<string>();
  private running = false;
  private lastWritten = '';
  /** Orphans deleted, by pod name: one audit entry each while they terminate. */
  private readonly deleted = new Set<string>();

  constructor(
    private readonly sql: Sql,
    private readonly api: CoreV1Api,
    private readonly watcher: Watcher,
    private readonly reconcilers: Reconcilers,
    private readonly driver: ClusterDriver,
    private readonly options: {
      namespace: string;
      gpuLabel: string;
      everyMs?: number;
      /** How often engines' /metrics are scraped at their pod IPs (LLMGW_KUBERNETES_SCRAPE_MS). */
      scrapeMs?: number;
      /** Where a load scraped from a replica's engine goes (its reconciler's load source); none: no scrape. */
      reportLoad?: (replica: string, load: EngineLoad) => Promise<void>;
      /** How one engine is scraped (src/agent/engine-metrics.ts's scrapeLoad). */
      scrapeLoad?: ScrapeLoad;
      /** A pod IP to host:port; tests point it at an engine on loopback (kwok's IPs reach nothing). */
      address?: (podIp: string) => string;
    },
    private readonly log: Pick<Console, 'warn' | 'info'> = console,
  ) {
    // What stop() stops before a first run; each run makes new ones.
    [this.nodes, this.pods] = this.informers();
    this.loop = new Repeating(
      () => this.step(),
      options.everyMs ?? 1000,
      (error) => log.warn(`kubernetes: keeping in step failed: ${String(error)}`),
    );
    // Apart from the step: a slow engine's scrape (a second at most) must not hold the nodes back.
    this.scraping = new Repeating(
      () => this.scrape(),
      options.scrapeMs ?? 1000,
      (error) => log.warn(`kubernetes: scraping engines failed: ${String(error)}`),
    );
  }

  /**
   * Lists and starts watching; resolves once both lists are in and the store has the nodes. A holder
   * that lost the lease and won it again starts from new lists.
   */
  async run(): Promise<void> {
    this.running = true;
    [this.nodes, this.pods] = this.informers();
    await Promise.all([this.nodes.start(), this.pods.start()]);
    if (!this.running) return;
    await this.step();
    if (!this.running) return;
    this.loop.start();
    if (this.options.reportLoad) this.scraping.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.nodes.stop();
    this.pods.stop();
    await Promise.all([this.loop.stop(), this.scraping.stop()]);
  }

  /** Each running engine's load, from its /metrics at its pod IP. Public for tests, as step is. */
  async scrape(): Promise<void> {
    const { reportLoad, scrapeLoad, address } = this.options;
    if (!reportLoad || !scrapeLoad) return;
    await scrapePodEngines(podEngines(this.ours(), address), scrapeLoad, reportLoad, this.log, this.failing);
  }

  /** Nodes, and pods of every namespace: the pods llmgw does not run hold room it must plan around. */
  private informers(): [Informer<V1Node>, Informer<V1Pod>] {
    const { api, watcher, log } = this;
    return [
      new Informer<V1Node>(
        'nodes',
        '/api/v1/nodes',
        () => api.listNode(),
        watcher,
        () => {},
        log,
      ),
      new Informer<V1Pod>(
        'pods',
        '/api/v1/pods',
        () => api.listPodForAllNamespaces(),
        watcher,
        () => {},
        log,
      ),
    ];
  }

  /** One round: nodes, orphans, pods gone. Public for tests, which need not wait for the period. */
  async step(): Promise<void> {
    await this.keepNodes();
    await this.deleteOrphans();
    await this.crashReplicasWithoutPods();
    await this.startAgainWithoutPods();
  }

  private async keepNodes(): Promise<void> {
    const nodes = nodesInStep(this.nodes.current(), this.pods.current(), this.options.gpuLabel, new Date());
    await keepKubernetesNodes(this.sql, nodes);
    // Room that changed may be what a pending replica waits for; its reconciler is told at once.
    const written = JSON.stringify(nodes.map(({ readyAt: _at, ...rest }) => rest));
    if (written === this.lastWritten) return;
    this.lastWritten = written;
    const waiting = (await Promise.all(nodes.map((node) => modelsWaitingOn(this.sql, node.name)))).flat();
    if (waiting.length > 0) await this.reconcilers.tell([...new Set(waiting)], 'replicaChanged');
  }

  private ours(): V1Pod[] {
    return this.pods
      .current()
      .filter((pod) => pod.metadata?.namespace === this.options.namespace && isOurs(pod));
  }

  private async deleteOrphans(): Promise<void> {
    const pods = this.ours().filter((pod) => !pod.metadata?.deletionTimestamp);
    const ids = pods.map((pod) => pod.metadata?.labels?.[REPLICA_LABEL] ?? '');
    const wanted = await activeReplicaIds(this.sql, ids);
    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      const replica = pod.metadata?.labels?.[REPLICA_LABEL] ?? '';
      if (wanted.has(replica) || this.deleted.has(name)) continue;
      try {
        await this.api.deleteNamespacedPod({
          name,
          namespace: this.options.namespace,
          gracePeriodSeconds: 0,
        });
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
      }
      this.deleted.add(name);
      const why = `its replica ${replica} is ${replica ? 'over or unknown to llmgw' : 'not named'}`;
      this.log.info(`kubernetes: deleted orphan pod ${this.options.namespace}/${name}: ${why}`);
      await recordEvent(
        this.sql,
        {
          actor: ACTOR,
          action: 'kubernetes.orphan-pod.delete',
          target: `pod ${this.options.namespace}/${name}`,
        },
        { replica, node: pod.spec?.nodeName ?? null, why },
      );
    }
    const present = new Set(this.ours().map((pod) => pod.metadata?.name ?? ''));
    for (const name of this.deleted) if (!present.has(name)) this.deleted.delete(name);
  }

  private async crashReplicasWithoutPods(): Promise<void> {
    const byReplica = new Map(
      this.ours().map((pod) => [pod.metadata?.labels?.[REPLICA_LABEL] ?? '', pod] as const),
    );
    for (const replica of await readyKubernetesReplicas(this.sql)) {
      const pod = byReplica.get(replica.id);
      const ended = pod && (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded');
      if (pod && !ended && !pod.metadata?.deletionTimestamp) continue;
      // The informer may lag its own creation event; the API server has the last word.
      if (!pod && (await this.podExists(replica.id))) continue;
      const reason = pod
        ? ended
          ? `its pod ended (${pod.status?.phase})`
          : 'its pod was deleted by someone other than llmgw'
        : 'its pod is gone';
      const settled = await applyReplicaReport(this.sql, replica.node, replica.id, {
        state: 'failed',
        reason,
      });
      if (settled?.moved) await this.reconcilers.tell([replica.model], 'replicaChanged');
    }
  }

  private async startAgainWithoutPods(): Promise<void> {
    const ours = new Set(this.ours().map((pod) => pod.metadata?.labels?.[REPLICA_LABEL] ?? ''));
    for (const id of await slowKubernetesStarts(this.sql, SLOW_START_MS)) {
      if (ours.has(id)) continue;
      const replica = await getReplica(this.sql, id);
      if (replica?.state === 'starting') await this.driver.start(replica);
    }
  }

  private async podExists(replica: string): Promise<boolean> {
    try {
      await this.api.readNamespacedPod({ name: podName(replica), namespace: this.options.namespace });
      return true;
    } catch (error) {
      if (statusOf(error) === 404) return false;
      throw error;
    }
  }
}
