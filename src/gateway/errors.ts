// The gateway's refusals in OpenAI's error shape, so that OpenAI SDKs raise their usual exceptions
// (they pick the exception by status: 401 AuthenticationError, 403 PermissionDeniedError, ...).

/** Why the gateway answers a request itself; each has one status, OpenAI error type and code. */
export const REFUSALS = {
  bad_request: { status: 400, type: 'invalid_request_error', code: 'invalid_request' },
  no_key: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' },
  unknown_key: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' },
  forbidden: { status: 403, type: 'permission_error', code: 'model_not_permitted' },
  unknown_model: { status: 404, type: 'invalid_request_error', code: 'model_not_found' },
  not_found: { status: 404, type: 'invalid_request_error', code: 'not_found' },
  too_large: { status: 413, type: 'invalid_request_error', code: 'request_too_large' },
  queue_full: { status: 429, type: 'rate_limit_error', code: 'queue_full' },
  upstream_failed: { status: 502, type: 'server_error', code: 'upstream_failed' },
  upstream_timeout: { status: 504, type: 'server_error', code: 'upstream_timeout' },
  internal: { status: 500, type: 'server_error', code: 'internal_error' },
  no_replica: { status: 503, type: 'server_error', code: 'no_replica_ready' },
  not_servable: { status: 503, type: 'server_error', code: 'model_not_servable' },
} as const;

export type RefusalKind = keyof typeof REFUSALS;

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
    /** Seconds a client should wait before it tries again (503 and 429). */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

/** `{"error": {"message", "type", "param", "code"}}`, as OpenAI answers. */
export function openAiErrorBody(kind: RefusalKind, message: string) {
  const { type, code } = REFUSALS[kind];
  return { error: { message, type, param: null, code } };
}

/**
 * The gateway's own answer to a refused request: its status, headers and JSON body, the same whether a
 * Hono route or the raw proxy path (proxy.ts) writes it.
 */
export function refusalAnswer(refusal: Refusal): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (refusal.retryAfterS !== undefined) headers['retry-after'] = String(refusal.retryAfterS);
  // The rest of a body too large is never read: the connection cannot serve another request.
  if (refusal.kind === 'too_large') headers.connection = 'close';
  const body = JSON.stringify(openAiErrorBody(refusal.kind, refusal.message));
  return { status: REFUSALS[refusal.kind].status, headers, body };
}

/** The event that ends a stream which failed after its first bytes were sent. */
export const streamErrorEvent = (message: string) =>
  `data: ${JSON.stringify(openAiErrorBody('upstream_failed', message))}\n\n`;
