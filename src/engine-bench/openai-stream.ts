import { ConnectionFailed, postJson } from './http-post.ts';
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
 * else from the chunks, which engines send one per token. Any error, status or timeout is a failed sample;
 * one that never reached the endpoint (refused, or closed before any answer on a new connection) says so.
 */
export async function streamChat(
  target: ChatTarget,
  prompt: string,
  maxTokens: number,
): Promise<RequestSample> {
  const started = performance.now();
  const signal = AbortSignal.timeout(target.timeoutMs);
  try {
    const body = JSON.stringify({
      model: target.model,
      messages: [{ role: 'user', content: prompt }],
      max_tokens: maxTokens,
      stream: true,
      stream_options: { include_usage: true },
      // Generate max_tokens every time, so that each level's requests do the same work.
      ignore_eos: true,
    });
    const response = await postJson(
      new URL(`${target.url.replace(/\/+$/, '')}/chat/completions`),
      body,
      signal,
    );
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      let text = '';
      for await (const chunk of response) text += chunk;
      text = text.slice(0, 200);
      return { ok: false, error: `HTTP ${status}${text ? `: ${text}` : ''}` };
    }
    let first: number | undefined;
    let last = 0;
    let chunks = 0;
    let reported: number | undefined;
    for await (const data of sseData(response)) {
      // Read to the end, not left at [DONE]: leaving a stream early destroys its pooled connection.
      if (data === '[DONE]') continue;
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
    if (signal.aborted) return { ok: false, error: `timed out after ${target.timeoutMs} ms` };
    if (error instanceof ConnectionFailed)
      return { ok: false, connection: true, error: `could not reach the endpoint (${error.message})` };
    return { ok: false, error: (error as Error).message };
  }
}
