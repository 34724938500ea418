import type { Resources } from '../domain/resources.ts';

/** What the agent tells the control plane, through its API and with its agent token only. */
export interface Registration {
  capacity: Resources;
  gpu_model?: string;
  labels: Record<string, string>;
}

export interface Heartbeat {
  state: string;
  back: boolean;
  wanted: { id: string; state: string }[];
  /** The node's Temporal credential, when Temporal authorizes calls: fresh with each heartbeat. */
  temporal?: { credential: string; expires_at: string };
}

/** The control plane's API as one node's agent calls it: every path is its node's. */
export class ControlPlane {
  private readonly base: string;

  constructor(
    apiUrl: string,
    private readonly token: string,
    readonly node: string,
  ) {
    this.base = `${apiUrl.replace(/\/+$/, '')}/api/v1/nodes/${encodeURIComponent(node)}`;
  }

  /** Registers the node; answers the address its token gives it, where its engines are to listen. */
  async register(registration: Registration): Promise<{ address: string }> {
    return (await this.call('PUT', '', { ...registration, driver: 'agent' })) as { address: string };
  }

  heartbeat(): Promise<Heartbeat> {
    return this.call('POST', '/heartbeat') as Promise<Heartbeat>;
  }

  reportFailed(replica: string, reason: string): Promise<unknown> {
    // The API keeps a reason of up to 2,000 characters: the log's end is the part that says why.
    return this.call('POST', `/replicas/${encodeURIComponent(replica)}/report`, {
      state: 'failed',
      reason: reason.length > 2000 ? `…${reason.slice(-1999)}` : reason,
    });
  }

  reportLoad(replica: string, load: { running: number; waiting: number }): Promise<unknown> {
    return this.call('POST', `/replicas/${encodeURIComponent(replica)}/load`, {
      in_flight: load.running,
      waiting: load.waiting,
    });
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const url = `${this.base}${path}`;
    const answer = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    }).catch((error: Error & { cause?: Error }) => {
      // fetch says only "fetch failed": name the URL (LLMGW_URL or --api) and what stopped it.
      throw new Error(`cannot reach the llmgw API at ${url}: ${error.cause?.message ?? error.message}`);
    });
    const text = await answer.text();
    if (!answer.ok) {
      const why = (() => {
        try {
          return JSON.parse(text).error ?? text;
        } catch {
          return text;
        }
      })();
      throw new Error(`${method} ${path || '/'} of node ${this.node}: ${answer.status} ${why}`);
    }
    return text ? JSON.parse(text) : null;
  }
}
