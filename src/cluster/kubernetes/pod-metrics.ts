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
 * Scrapes each engine once, at once, and hands each load to `report`; a failed scrape is skipped, so
 * the gateway's counts stand for it, and logged once until that replica's scrape works again (an engine
 * still loading, or kwok's fake IPs, would otherwise log every period). `failing` keeps them between calls.
 */
export async function scrapePodEngines(
  engines: readonly PodEngine[],
  scrapeLoad: ScrapeLoad,
  report: (replica: string, load: EngineLoad) => Promise<void>,
  log: Pick<Console, 'warn'>,
  failing: Set<string> = new Set(),
): Promise<void> {
  await Promise.all(
    engines.map(async (engine) => {
      let load: EngineLoad;
      try {
        load = await scrapeLoad(engine.url, engine.gauges);
      } catch (error) {
        if (!failing.has(engine.replica))
          log.warn(`kubernetes: scraping replica ${engine.replica}'s engine failed: ${String(error)}`);
        failing.add(engine.replica);
        return;
      }
      failing.delete(engine.replica);
      await report(engine.replica, load);
    }),
  );
  const present = new Set(engines.map((engine) => engine.replica));
  for (const replica of failing) if (!present.has(replica)) failing.delete(replica);
}
