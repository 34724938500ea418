import { Failed } from './errors.ts';

export interface Answer<T> {
  status: number;
  body: T;
}

/** The llmgw HTTP API (API.md) as `llmgw ctl` uses it: JSON in and out, errors as Failed. */
export class ApiClient {
  constructor(
    private readonly server: string,
    private readonly token?: string,
  ) {}

  /** Sends a request; a status of 400 or more becomes Failed with the server's `error` sentence. */
  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    const url = `${this.server.replace(/\/+$/, '')}/api/v1${path}`;
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      const cause = (error as { cause?: Error }).cause;
      throw new Failed(`cannot reach llmgw at ${this.server}: ${cause?.message ?? (error as Error).message}`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.status >= 400) {
      const sentence = (parsed as { error?: unknown } | undefined)?.error;
      throw new Failed(
        typeof sentence === 'string'
          ? sentence
          : `${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`,
      );
    }
    if (parsed === undefined)
      throw new Failed(`${method} ${path} answered something that is not JSON: ${text.slice(0, 200)}`);
    return { status: response.status, body: parsed as T };
  }

  async get<T = unknown>(path: string): Promise<T> {
    return (await this.call<T>('GET', path)).body;
  }
}

/** `?model=x&node=y` for the filters given as strings, "" when none is. */
export const queryString = (filters: Record<string, string | boolean | undefined>) => {
  const given = Object.entries(filters).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string',
  );
  return given.length ? `?${new URLSearchParams(given)}` : '';
};
