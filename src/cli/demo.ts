/**
 * `llmgw dev --demo`: a small story a newcomer can watch within a few minutes. Two teams share the
 * simulated demo cluster (2 H100 nodes of 8 GPUs, 2 L4 nodes of 4, 2 CPU nodes): team Acme / ml has a
 * guarantee of 8 GPUs, team Acme / web none but a limit of 12. A load generator replays phases:
 * 1. `code` (web) bursts and borrows most of the H100s until web's limit stops it;
 * 2. `chat` (ml) bursts: it is within its guarantee, finds no room, and reclaims a borrowed replica
 *    of `code`; past its guarantee it falls back to its L4 profile;
 * 3. both calm down and scale down after the window; `embed` (CPU) follows its own gentle wave.
 * Everything goes through the HTTP API, as an operator and a gateway would.
 */

const PHASE_S = 75;

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

const h100 = (gpus: number, concurrency: number, priority = 10) => ({
  name: 'vllm-h100',
  priority,
  resources: { gpus, cores: gpus * 8, memory_gib: gpus * 96 },
  gpu_model: 'H100',
  default_concurrency: concurrency,
  runtime: 'sim',
});

export async function seedDemo(call: Call) {
  const exists = (await call('GET', '/api/v1/orgs')) as { name: string }[];
  if (exists.some((org) => org.name === 'Acme')) return false; // seeded on an earlier start
  await call('POST', '/api/v1/orgs', { name: 'Acme' });
  await call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
  await call('POST', '/api/v1/teams', { org: 'Acme', name: 'web' });
  await call('PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 8 }, limit: { gpus: 16 } });
  await call('PUT', '/api/v1/quotas', { scope: 'team:Acme/web', limit: { gpus: 12, cores: 160 } });
  // What runs the demo's replicas: an admin's runtime, which the teams' models name (as operators would).
  await call('PUT', '/api/v1/runtimes/sim', {
    kind: 'sim',
    description:
      "llmgw's simulated engine; an operator may set its batch (default: the profile's default_concurrency)",
    params: { max_batch: { type: 'integer', min: 1, max: 256 } },
  });

  await call('PUT', '/api/v1/models/chat', {
    owner: 'team:Acme/ml',
    min_replicas: 1,
    max_replicas: 8,
    profiles: [
      h100(2, 16),
      {
        name: 'vllm-l4',
        priority: 5,
        resources: { gpus: 1, cores: 8, memory_gib: 48 },
        gpu_model: 'L4',
        default_concurrency: 4,
        runtime: 'sim',
      },
    ],
  });
  await call('PUT', '/api/v1/models/code', {
    owner: 'team:Acme/web',
    min_replicas: 1,
    max_replicas: 8,
    profiles: [h100(2, 12)],
  });
  await call('PUT', '/api/v1/models/embed', {
    owner: 'team:Acme/web',
    min_replicas: 1,
    max_replicas: 4,
    profiles: [
      {
        name: 'cpu',
        priority: 1,
        resources: { cores: 16, memory_gib: 32 },
        default_concurrency: 32,
        runtime: 'sim',
      },
    ],
  });
  const measure = (model: string, profile: string, c: number, tps: number) =>
    call('PUT', '/api/v1/measurements', {
      model,
      profile,
      max_concurrency_at_slo: c,
      throughput_tok_per_sec: tps,
      slo: { ttft_p95_ms: 500, tpot_p95_ms: 50 },
      tool: 'demo',
    });
  await measure('chat', 'vllm-h100', 20, 2400);
  await measure('chat', 'vllm-l4', 5, 400);
  await measure('code', 'vllm-h100', 12, 1800);
  return true;
}

/** In flight per model at `t` seconds into the story (it repeats every four phases). */
export function demoLoad(t: number, jitter: () => number): Record<string, number> {
  const phase = Math.floor(t / PHASE_S) % 4;
  const wave = (base: number, amplitude: number, period: number) =>
    base + amplitude * Math.sin((2 * Math.PI * t) / period);
  const noisy = (n: number) => Math.max(0, Math.round(n * (0.9 + 0.2 * jitter())));
  const code = [80, 80, 10, 5][phase]; // 80 needs 7 replicas; web's limit of 12 GPUs stops it at 6
  const chat = [10, 110, 110, 10][phase]; // 110 needs 6 H100 replicas: 4 within the guarantee, then L4s
  return { code: noisy(code), chat: noisy(chat), embed: noisy(wave(40, 30, 120)) };
}

/** What the demo tells a newcomer to run to watch it: commands against the API at `apiUrl`, wherever PORT put it. */
export function demoHints(apiUrl: string): string[] {
  return [
    'demo: a load generator reports bursts every 2 s; watch the models and their decisions:',
    `  curl -s -H "authorization: Bearer $LLMGW_TOKEN" ${apiUrl}/api/v1/models | jq`,
    `  LLMGW_URL=${apiUrl} npx llmgw ctl model list`,
  ];
}

/** Reports the story's load every two seconds until stopped. */
export function runLoadGenerator(call: Call, log: Pick<Console, 'warn'>) {
  const started = Date.now();
  let seed = 42;
  const jitter = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const timer = setInterval(async () => {
    const load = demoLoad((Date.now() - started) / 1000, jitter);
    for (const [model, inFlight] of Object.entries(load)) {
      await call('POST', `/api/v1/models/${model}/load`, {
        in_flight: inFlight,
        source: 'demo-gateway',
      }).catch((error) => log.warn(`demo load: ${String(error)}`));
    }
  }, 2000);
  return () => clearInterval(timer);
}
