import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostUrl } from '../../domain/node-grant.ts';
import { SimBatch } from './engine-batch.ts';
import type { SimEngineModel } from './engine-model.ts';
import {
  completionShapes,
  embeddingsAnswer,
  parseEngineRequest,
  type RequestKind,
  tokenText,
} from './engine-openai.ts';
import { SimPrefixCache } from './engine-prefix-cache.ts';

export { simKnee } from './engine-model.ts';

export interface SimEngineOptions extends SimEngineModel {
  /** 0 or absent: a free port. */
  port?: number;
  /** The address it listens on (default 127.0.0.1). */
  host?: string;
  /** Seeds the jitter. */
  seed: number;
  /** The model /v1/models lists; requests may name any model. */
  model?: string;
  /**
   * Prompt tokens its prefix cache holds (engine-prefix-cache.ts): a prompt's cached leading blocks need
   * no prefill. 0 or absent: no cache, every prompt token is prefilled.
   */
  prefixCacheTokens?: number;
}

export interface SimEngine {
  /** The server's address, e.g. http://127.0.0.1:41234; the OpenAI API is under `${url}/v1`. */
  url: string;
  stop(): Promise<void>;
}

/** What a simulated engine's profile does not say: its batch, and how fast it serves alone and how that slows. */
export const SIM_DEFAULTS = { maxBatch: 8, baseTpotMs: 20, tpotGrowthMs: 2 } as const;

/** A small number from a replica ID, so each engine's jitter differs but repeats. */
export const seedOf = (id: string) => [...id].reduce((hash, ch) => (hash * 31 + ch.charCodeAt(0)) >>> 0, 7);

const BODY_LIMIT = 1024 * 1024;

const KINDS = new Map<string, RequestKind>([
  ['/v1/chat/completions', 'chat'],
  ['/v1/completions', 'completion'],
  ['/v1/embeddings', 'embedding'],
]);

/**
 * An OpenAI-compatible streaming server that behaves like an LLM engine under load (engine-model.ts):
 * tokens come slower the more requests it serves at once, and requests beyond its batch wait for a slot.
 * It serves POST /v1/chat/completions and /v1/completions (streamed or not), POST /v1/embeddings,
 * GET /v1/models, GET /health and GET /metrics with vLLM's gauges, so `llmgw ctl bench`, the gateway and
 * load reporters can be tested without a GPU.
 */
export async function startSimEngine(options: SimEngineOptions): Promise<SimEngine> {
  checkOptions(options);
  const model = options.model ?? 'sim';
  const batch = new SimBatch(options, options.seed);
  const cache = options.prefixCacheTokens ? new SimPrefixCache(options.prefixCacheTokens) : undefined;
  let completions = 0;

  const answer = async (kind: RequestKind, req: IncomingMessage, res: ServerResponse) => {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (error) {
      return replyError(res, 400, `the body is not JSON: ${(error as Error).message}`);
    }
    const request = parseEngineRequest(kind, body);
    if (typeof request === 'string') return replyError(res, 400, request);
    let done = false;
    let onToken = (_index: number) => {};
    let onDone = () => replyJson(res, 200, embeddingsAnswer(model, request));
    if (kind !== 'embedding') {
      const prefix = kind === 'chat' ? 'chatcmpl' : 'cmpl';
      const shapes = completionShapes(kind, `${prefix}-sim-${++completions}`, model, request.promptTokens);
      const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
      let text = '';
      if (request.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
      }
      // Like vLLM, the role comes with the first token, so a client timing its first chunk times the token.
      onToken = (index) => {
        if (!request.stream) {
          text += tokenText(index);
          return;
        }
        const opening = index === 0 && shapes.opening();
        if (opening) send(opening);
        send(shapes.piece(tokenText(index)));
      };
      onDone = () => {
        if (!request.stream) return replyJson(res, 200, shapes.whole(text, request.maxTokens));
        send(shapes.piece('', 'length'));
        if (request.includeUsage) send(shapes.usageChunk(request.maxTokens));
        res.end('data: [DONE]\n\n');
      };
    }
    const cancel = batch.submit({
      // What it prefills: the prompt but for its blocks in the cache.
      promptTokens: cache ? cache.admit(request.prompt) : request.promptTokens,
      maxTokens: request.maxTokens,
      onToken,
      onDone() {
        done = true;
        onDone();
      },
    });
    res.on('close', () => {
      if (!done) cancel();
    });
  };

  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const kind = req.method === 'POST' ? KINDS.get(path) : undefined;
    if (kind) {
      answer(kind, req, res).catch((error) => replyError(res, 500, String(error)));
    } else if (req.method === 'GET' && path === '/v1/models') {
      replyJson(res, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'llmgw-sim', root: model }],
      });
    } else if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(metricsText(model, batch.runningCount, batch.waitingCount, cache));
    } else if (req.method === 'GET' && path === '/health') {
      res.writeHead(200).end();
    } else {
      replyError(res, 404, `there is no ${req.method} ${path}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: hostUrl(host, port),
    async stop() {
      batch.stopAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function checkOptions(options: SimEngineOptions) {
  const problems = [
    Number.isInteger(options.maxBatch) && options.maxBatch >= 1
      ? null
      : 'maxBatch must be a whole number >= 1',
    options.baseTpotMs >= 0 ? null : 'baseTpotMs must be >= 0',
    options.tpotGrowthMs >= 0 ? null : 'tpotGrowthMs must be >= 0',
    (options.prefillMsPerToken ?? 0) >= 0 ? null : 'prefillMsPerToken must be >= 0',
    options.jitter >= 0 && options.jitter <= 1 ? null : 'jitter must be between 0 and 1',
  ].filter(Boolean);
  if (problems.length > 0) throw new RangeError(`startSimEngine: ${problems.join('; ')}`);
}

/** Prometheus text with the gauges vLLM exports under the same names. */
function metricsText(model: string, running: number, waiting: number, cache?: SimPrefixCache): string {
  const metric = (name: string, type: string, help: string, value: number) =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}{model_name="${model}"} ${value}\n`;
  const counters = cache
    ? metric(
        'vllm:prefix_cache_queries_total',
        'counter',
        'Prompt tokens looked up in the prefix cache.',
        cache.queries,
      ) +
      metric(
        'vllm:prefix_cache_hits_total',
        'counter',
        'Prompt tokens found in the prefix cache.',
        cache.hits,
      )
    : '';
  return (
    metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', running) +
    metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', waiting) +
    counters
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new Error('the body is larger than 1 MiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function replyJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** OpenAI's error shape. */
function replyError(res: ServerResponse, status: number, message: string) {
  if (res.headersSent) return res.end();
  replyJson(res, status, { error: { message, type: 'invalid_request_error', code: status } });
}
