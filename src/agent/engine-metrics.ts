import { type EngineLoad, engineLoad, type LoadGauges } from '../domain/engine-metrics.ts';

export * from '../domain/engine-metrics.ts';

/** Scrapes an engine's /metrics once (a second at most: the agent scrapes every second). */
export async function scrapeLoad(url: string, gauges: LoadGauges): Promise<EngineLoad> {
  const answer = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(1000) });
  if (!answer.ok) throw new Error(`${url}/metrics answered ${answer.status}`);
  return engineLoad(await answer.text(), gauges);
}
