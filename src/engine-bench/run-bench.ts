import { type Level, type RequestSample, type Slo, summarizeLevel } from './level.ts';
import { type ChatTarget, streamChat } from './openai-stream.ts';
import { benchPrompt } from './prompt.ts';
import { findKnee, type KneeResult } from './search.ts';

export interface BenchOptions {
  target: ChatTarget;
  slo: Slo;
  promptTokens: number;
  maxTokens: number;
  /** Requests per level; default max(8, 2 x concurrency). Never fewer than the concurrency. */
  requestsPerLevel?: number;
  maxConcurrency: number;
}

const requestsFor = (concurrency: number, requestsPerLevel?: number) =>
  Math.max(requestsPerLevel ?? Math.max(8, 2 * concurrency), concurrency);

/**
 * Runs `total` requests with `concurrency` of them in flight at all times (closed loop: each client
 * sends its next request when its last one ends), and times the whole level.
 */
export async function runLevel(
  concurrency: number,
  total: number,
  send: (request: number) => Promise<RequestSample>,
): Promise<Level> {
  const samples: RequestSample[] = [];
  let next = 0;
  const client = async () => {
    while (next < total) samples.push(await send(next++));
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  return summarizeLevel(concurrency, samples, performance.now() - started);
}

/**
 * Finds the highest concurrency at which an OpenAI-compatible endpoint meets the SLO. One request goes
 * first, unmeasured: it opens the connection and warms both ends, which would otherwise weigh on the
 * first level's p95; and an endpoint that cannot answer it is reported as such, not as a knee of 0.
 */
export async function benchEndpoint(
  options: BenchOptions,
  onLevel?: (level: Level) => void,
): Promise<KneeResult> {
  let sent = 0;
  const send = () => streamChat(options.target, benchPrompt(sent++, options.promptTokens), options.maxTokens);
  const warmUp = await send();
  if (!warmUp.ok) throw new Error(`${options.target.url} did not answer a first request: ${warmUp.error}`);
  const measure = (concurrency: number) =>
    runLevel(concurrency, requestsFor(concurrency, options.requestsPerLevel), send);
  return findKnee(measure, options.slo, options.maxConcurrency, onLevel);
}
