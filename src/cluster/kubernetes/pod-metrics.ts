import type { V1Pod } from '@kubernetes/client-node';
import { type EngineLoad, LOAD_GAUGES, type LoadGauges } from '../../domain/engine-metrics.ts';
import { ENGINE_PORT, METRICS_ANNOTATION, REPLICA_LABEL } from './pod.ts';

/** One running pod's engine to scrape: its replica, its /metrics base URL and the gauges it exports. */
export interface PodEngine {
  replica: string;
  url: string;
  gauges: LoadGauges;
}

/**
 * The engines among llmgw's pods that export load gauges (the pod's metrics annotation, written by
 * podFor from the engine's kind) and that run with an IP. `address` turns a pod IP into a host: tests
 * point it at an engine on loopback, where kwok's fake IPs reach nothing.
 */
export function podEngines(
  pods: readonly V1Pod[],
  address: (podIp: string) => string = (ip) => `${ip}:${ENGINE_PORT}`,
): PodEngine[] {
  const engines: PodEngine[] = [];
  for (const pod of pods) {
    const kind = pod.metadata?.annotations?.[METRICS_ANNOTATION] as keyof typeof LOAD_GAUGES | undefined;
    const replica = pod.metadata?.labels?.[REPLICA_LABEL];
    const ip = pod.status?.podIP;
    if (!kind || !(kind in LOAD_GAUGES) || !replica || !ip) continue;
    if (pod.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) continue;
    engines.push({ replica, url: `http://${address(ip)}`, gauges: LOAD_GAUGES[kind] });
  }
  return engines;
}

/** Scrapes one engine's /metrics (the agent's scrapeLoad, a second at most: given, src/cluster is no agent). */
export type ScrapeLoad = (url: string, gauges: LoadGauges) => Promise<EngineLoad>;

/**
 * Scrapes each engine once, at once, and hands each load to `report`; a failed scrape is logged and
 * skipped, so the gateway's counts stand for it.
 */
export async function scrapePodEngines(
  engines: readonly PodEngine[],
  scrapeLoad: ScrapeLoad,
  report: (replica: string, load: EngineLoad) => Promise<void>,
  log: Pick<Console, 'warn'>,
): Promise<void> {
  await Promise.all(
    engines.map(async (engine) => {
      let load: EngineLoad;
      try {
        load = await scrapeLoad(engine.url, engine.gauges);
      } catch (error) {
        log.warn(`kubernetes: scraping replica ${engine.replica}'s engine failed: ${String(error)}`);
        return;
      }
      await report(engine.replica, load);
    }),
  );
}
