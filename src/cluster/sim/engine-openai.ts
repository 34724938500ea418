/** The OpenAI request and answer shapes the simulated engine reads and writes, as vLLM serves them. */

export type RequestKind = 'chat' | 'completion' | 'embedding';

export interface EngineRequest {
  promptTokens: number;
  /** The prompt's text (its messages' contents in order), for the prefix cache. */
  prompt: string;
  /** Tokens to generate (1 for an embedding: its prefill is its cost). */
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
  /** Embeddings only: the inputs' count, and whether vectors go as base64 floats (the openai SDK asks so). */
  inputs: number;
  base64: boolean;
}

const DEFAULT_MAX_TOKENS = 16;
/** The simulated embedding's length. */
const EMBEDDING_DIMENSIONS = 8;

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/** A prompt's text: a string, strings, or content parts with text. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join(' ');
  const part = value as { text?: unknown; content?: unknown } | null;
  if (typeof part?.text === 'string') return part.text;
  return part?.content === undefined ? '' : textOf(part.content);
}

/**
 * The parts of a request the simulation uses. Prompt tokens are counted as words (close enough for
 * prefill time); the engine never stops early, as if `ignore_eos` were always set.
 */
export function parseEngineRequest(kind: RequestKind, body: unknown): EngineRequest | string {
  if (typeof body !== 'object' || body === null) return 'the body must be a JSON object';
  const request = body as Record<string, unknown>;
  const prompt = { chat: request.messages, completion: request.prompt, embedding: request.input }[kind];
  const field = { chat: 'messages', completion: 'prompt', embedding: 'input' }[kind];
  const shape = kind === 'chat' ? 'array' : 'string or array';
  if (kind === 'chat' ? !Array.isArray(prompt) : typeof prompt !== 'string' && !Array.isArray(prompt))
    return `${field} must be a non-empty ${shape}`;
  if ((prompt as string | unknown[]).length === 0) return `${field} must be a non-empty ${shape}`;
  const maxTokens =
    kind === 'embedding' ? 1 : (request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS);
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1)
    return 'max_tokens must be a positive integer';
  const options = request.stream_options as { include_usage?: unknown } | undefined;
  const text = textOf(prompt);
  return {
    promptTokens: words(text),
    prompt: text,
    maxTokens: maxTokens as number,
    stream: kind !== 'embedding' && request.stream === true,
    includeUsage: options?.include_usage === true,
    inputs: Array.isArray(prompt) && kind === 'embedding' ? prompt.length : 1,
    base64: request.encoding_format === 'base64',
  };
}

/** The chunks and the whole answer of one chat or text completion. */
export function completionShapes(
  kind: 'chat' | 'completion',
  id: string,
  model: string,
  promptTokens: number,
) {
  const created = Math.floor(Date.now() / 1000);
  const usage = (completion: number) => ({
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  });
  const chat = kind === 'chat';
  const chunk = (choices: unknown[], extra: object = {}) => ({
    id,
    object: chat ? 'chat.completion.chunk' : 'text_completion',
    created,
    model,
    choices,
    ...extra,
  });
  return {
    /** The chunk a chat stream opens with, with the role (none for text completions). */
    opening: () =>
      chat
        ? chunk([
            { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
          ])
        : null,
    /** A streamed piece of text; the last one says why the answer ends, with no text. */
    piece: (text: string, finishReason: string | null = null) =>
      chunk([
        chat
          ? {
              index: 0,
              delta: finishReason ? {} : { content: text },
              logprobs: null,
              finish_reason: finishReason,
            }
          : { index: 0, text, logprobs: null, finish_reason: finishReason },
      ]),
    usageChunk: (completion: number) => chunk([], { usage: usage(completion) }),
    whole: (text: string, completion: number) => ({
      id,
      object: chat ? 'chat.completion' : 'text_completion',
      created,
      model,
      choices: [
        chat
          ? {
              index: 0,
              message: { role: 'assistant', content: text },
              logprobs: null,
              finish_reason: 'length',
            }
          : { index: 0, text, logprobs: null, finish_reason: 'length' },
      ],
      usage: usage(completion),
    }),
  };
}

/** An embeddings answer: a made-up vector per input, the same for the same index. */
export function embeddingsAnswer(model: string, request: EngineRequest) {
  const vector = (index: number) =>
    Array.from({ length: EMBEDDING_DIMENSIONS }, (_, d) => Math.sin(index + d + 1) / 2);
  const encode = (values: number[]) => Buffer.from(new Float32Array(values).buffer).toString('base64');
  return {
    object: 'list',
    model,
    data: Array.from({ length: request.inputs }, (_, index) => ({
      object: 'embedding',
      index,
      embedding: request.base64 ? encode(vector(index)) : vector(index),
    })),
    usage: { prompt_tokens: request.promptTokens, total_tokens: request.promptTokens },
  };
}

export const tokenText = (index: number) => ` tok${index}`;
