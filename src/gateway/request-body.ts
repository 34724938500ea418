import type { IncomingMessage } from 'node:http';
import { Refusal } from './errors.ts';

/** The longest `model` a request may give: one longer is refused as naming no model. */
const MODEL_NAME_MAX = 200;

/** The body of a request node:http serves, read up to `maxBytes` (a chunked body is stopped there rather than held whole). */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    new Refusal(
      'too_large',
      `the body is larger than ${Math.round((maxBytes / 1024 / 1024) * 1000) / 1000} MiB, the most the gateway forwards (LLMGW_GATEWAY_MAX_BODY_MIB)`,
    );
  if (Number(request.headers['content-length'] ?? 0) > maxBytes) throw tooLarge();
  // Events rather than an async iterator: this runs for every request, and the iterator costs more.
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const read: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void read.push(chunk);
      request.pause();
      reject(tooLarge());
    });
    request.once('end', () => resolve(read));
    request.once('error', reject);
  });
  return Buffer.concat(chunks);
}

/** The body as JSON, and the model it names. */
export function routedRequest(body: Buffer): {
  body: Buffer;
  model: string;
  fields: Record<string, unknown>;
} {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new Refusal('bad_request', `the body is not valid JSON: ${(error as Error).message}`);
  }
  // Only `model` is read; the rest passes to the replica as sent. A schema's parse would copy every field
  // of the body, on every request (1.5% of the gateway's CPU in a profile).
  const model = (json as { model?: unknown } | null)?.model;
  if (
    typeof json !== 'object' ||
    Array.isArray(json) ||
    typeof model !== 'string' ||
    model.length === 0 ||
    model.length > MODEL_NAME_MAX
  ) {
    throw new Refusal(
      'bad_request',
      'the body must be a JSON object whose "model" names a model (GET /v1/models lists those this key may call)',
    );
  }
  return { body, model, fields: json as Record<string, unknown> };
}
