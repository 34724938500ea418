// What engines' /metrics say of their load: pure, shared by the agent's scrape and the Kubernetes
// worker's scrape at pod IPs (src/cluster/kubernetes/pod-metrics.ts).

/** A replica's load as its engine counts it: requests it is serving, and those queued for a slot. */
export interface EngineLoad {
  running: number;
  waiting: number;
}

/**
 * The gauges each engine exports for its running and waiting requests, as their documentation names
 * them: vLLM's "Production Metrics" (docs.vllm.ai), SGLang's "Production Metrics" (docs.sglang.io,
 * with --enable-metrics), llama.cpp's server README ("GET /metrics", with --metrics).
 */
export const LOAD_GAUGES = {
  vllm: { running: 'vllm:num_requests_running', waiting: 'vllm:num_requests_waiting' },
  sglang: { running: 'sglang:num_running_reqs', waiting: 'sglang:num_queue_reqs' },
  'llama.cpp': { running: 'llamacpp:requests_processing', waiting: 'llamacpp:requests_deferred' },
} as const;

export type LoadGauges = (typeof LOAD_GAUGES)[keyof typeof LOAD_GAUGES];

/** What of an engine's spec (src/contracts/schemas/engine.ts) says whether its metrics are scraped. */
export type ScrapedEngine = (
  | { kind: keyof typeof LOAD_GAUGES }
  | { kind: 'command' }
  | { kind: 'sim'; metrics?: boolean }
) & { [field: string]: unknown };

/**
 * Which gauges a replica's /metrics holds, or null when nobody scrapes it: a command engine's metrics
 * are unknown, and a sim engine with `metrics: false` is left to the gateway's counts. The sim engine
 * exports vLLM's names.
 */
export function loadGaugesOf(engine: ScrapedEngine): LoadGauges | null {
  if (engine.kind === 'command') return null;
  if (engine.kind === 'sim') return engine.metrics === false ? null : LOAD_GAUGES.vllm;
  return LOAD_GAUGES[engine.kind];
}

/**
 * Each metric's value in Prometheus' text format, summed over its label sets (one per engine of a
 * data-parallel vLLM, one per rank of SGLang). Comments, histograms' series and timestamps pass by.
 */
export function prometheusSums(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    const sample = parseSample(line.trim());
    if (sample) sums.set(sample.name, (sums.get(sample.name) ?? 0) + sample.value);
  }
  return sums;
}

const INFINITIES: Record<string, number> = {
  '+Inf': Number.POSITIVE_INFINITY,
  '-Inf': Number.NEGATIVE_INFINITY,
};

/** `name{label="v",...} value [timestamp]`; label values may hold spaces, braces and escaped quotes. */
function parseSample(line: string): { name: string; value: number } | null {
  if (line === '' || line.startsWith('#')) return null;
  const name = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)?.[0];
  if (!name) return null;
  let rest = line.slice(name.length);
  if (rest.startsWith('{')) {
    const end = labelsEnd(rest);
    if (end < 0) return null;
    rest = rest.slice(end + 1);
  }
  const field = rest.trim().split(/\s+/)[0];
  // Number() reads "" as 0 and knows "Infinity" but not Prometheus' "+Inf"; NaN is no count.
  const value = INFINITIES[field] ?? (field === '' ? Number.NaN : Number(field));
  return Number.isNaN(value) ? null : { name, value };
}

/** Where the label set opened at 0 closes, outside quoted values; -1 when it does not. */
function labelsEnd(text: string): number {
  let quoted = false;
  for (let i = 1; i < text.length; i++) {
    if (quoted && text[i] === '\\') i++;
    else if (text[i] === '"') quoted = !quoted;
    else if (!quoted && text[i] === '}') return i;
  }
  return -1;
}

/** Running and waiting requests from one scrape; a gauge the text lacks is a mistake said in a sentence. */
export function engineLoad(text: string, gauges: LoadGauges): EngineLoad {
  const sums = prometheusSums(text);
  const gauge = (name: string) => {
    const value = sums.get(name);
    if (value === undefined)
      throw new Error(`its /metrics has no ${name}: is it the engine its profile says?`);
    return value;
  };
  return { running: gauge(gauges.running), waiting: gauge(gauges.waiting) };
}
