/** The OpenAI chat completion shapes the simulated engine reads and writes, as vLLM serves them. */

export interface ChatRequest {
  promptTokens: number;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
}

const DEFAULT_MAX_TOKENS = 16;

/**
 * The parts of a chat completion request the simulation uses. Prompt tokens are counted as words (close
 * enough for prefill time); the engine never stops early, as if `ignore_eos` were always set.
 */
export function parseChatRequest(body: unknown): ChatRequest | string {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object';
  const request = body as Record<string, unknown>;
  if (!Array.isArray(request.messages) || request.messages.length === 0)
    return 'messages must be a non-empty array';
  const text = request.messages
    .map((message) => {
      const content = (message as { content?: unknown })?.content;
      if (typeof content === 'string') return content;
      if (Array.isArray(content))
        return content.map((part) => (part as { text?: string })?.text ?? '').join(' ');
      return '';
    })
    .join(' ');
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)
    return 'max_tokens must be a positive integer';
  const options = request.stream_options as { include_usage?: unknown } | undefined;
  return {
    promptTokens: text.split(/\s+/).filter(Boolean).length,
    maxTokens: maxTokens as number,
    stream: request.stream === true,
    includeUsage: options?.include_usage === true,
  };
}

/** The chunks and the whole answer of one completion. */
export function completionShapes(id: string, model: string, promptTokens: number) {
  const created = Math.floor(Date.now() / 1000);
  const usage = (completion: number) => ({
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  });
  const chunk = (choices: unknown[], extra: object = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
    ...extra,
  });
  return {
    delta: (delta: object, finishReason: string | null = null) =>
      chunk([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]),
    usageChunk: (completion: number) => chunk([], { usage: usage(completion) }),
    whole: (content: string, completion: number) => ({
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        { index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'length' },
      ],
      usage: usage(completion),
    }),
  };
}

export const tokenText = (index: number) => ` tok${index}`;
