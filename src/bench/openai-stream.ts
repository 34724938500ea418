import type { RequestSample } from './level.ts';
import { sseData } from './sse.ts';

export interface ChatTarget {
  /** The OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1. */
  url: string;
  /** The model name the engine serves. */
  model: string;
  timeoutMs: number;
}

interface ChunkJson {
  choices?: { delta?: { content?: string | null; reasoning_content?: string | null } }[];
  usage?: { completion_tokens?: number } | null;
  error?: unknown;
}

/**
 * Sends one streaming chat completion and times it: TTFT is the time to the first chunk that carries
 * generated text, TPOT the mean time between the following tokens, as `vllm bench serve` defines them.
 * The token count comes from the usage the engine reports at the end (`stream_options.include_usage`),
 * else from the chunks, which engines send one per token. Any error, status or timeout is a failed sample.
 */
export async function streamChat(
  target: ChatTarget,
  prompt: string,
  maxTokens: number,
): Promise<RequestSample> {
  const started = performance.now();
  try {
    const response = await fetch(`${target.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: target.model,
        messages: [{ role: 'user', content: prompt }],
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
        // Generate max_tokens every time, so that each level's requests do the same work.
        ignore_eos: true,
      }),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    if (!response.ok || !response.body) {
      const text = (await response.text()).slice(0, 200);
      return { ok: false, error: `HTTP ${response.status}${text ? `: ${text}` : ''}` };
    }
    let first: number | undefined;
    let last = 0;
    let chunks = 0;
    let reported: number | undefined;
    for await (const data of sseData(response.body)) {
      if (data === '[DONE]') break;
      const chunk = JSON.parse(data) as ChunkJson;
      if (chunk.error) return { ok: false, error: `the engine reported: ${JSON.stringify(chunk.error)}` };
      if (chunk.usage?.completion_tokens !== undefined) reported = chunk.usage.completion_tokens;
      const delta = chunk.choices?.[0]?.delta;
      if (delta?.content || delta?.reasoning_content) {
        last = performance.now();
        first ??= last;
        chunks++;
      }
    }
    if (first === undefined) return { ok: false, error: 'the engine streamed no token' };
    const outputTokens = reported ?? chunks;
    return {
      ok: true,
      ttftMs: first - started,
      tpotMs: outputTokens > 1 ? (last - first) / (outputTokens - 1) : null,
      e2eMs: performance.now() - started,
      outputTokens,
    };
  } catch (error) {
    const { name, message, cause } = error as Error & { cause?: Error };
    if (name === 'TimeoutError') return { ok: false, error: `timed out after ${target.timeoutMs} ms` };
    // fetch says only "fetch failed"; the cause says why (refused, reset, ...).
    return { ok: false, error: cause?.message ?? message };
  }
}
