/** How the console reaches the API: the app's own fetch, in-process, so that no figure is computed twice. */
export type ApiFetch = (path: string, init: RequestInit) => Response | Promise<Response>;

/** An answer of the API that is not a success: its status and its one sentence. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The API as the signed-in token calls it: every page reads what `GET /api/v1/...` answers that token,
 * so the console shows what the API shows, filtered by the same permissions.
 */
export function apiAs(fetch: ApiFetch, authorization: string) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(path, {
      method,
      headers: {
        authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await response.json().catch(() => ({}))) as T & { error?: string };
    if (!response.ok)
      throw new ApiRefusal(response.status, parsed.error ?? `the API answered ${response.status}`);
    return parsed;
  };
  return {
    get: <T>(path: string) => call<T>('GET', path),
    post: <T>(path: string, body: unknown) => call<T>('POST', path, body),
    /** The raw answer, for a stream the console passes on as it comes. */
    stream: (path: string) => fetch(path, { method: 'GET', headers: { authorization } }),
  };
}

export type Api = ReturnType<typeof apiAs>;
