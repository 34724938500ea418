import type { Resources } from './resources.ts';

/** The most an agent's node may declare: what the admin who made its token gave. */
export interface NodeBounds {
  capacity: Resources;
  /** The one GPU model it may declare; absent: it declares none. */
  gpu_model?: string;
  /** The labels it may declare (each with this value); absent: it declares none. */
  labels?: Record<string, string>;
}

/** What an agent token says of its node besides the name: where it is reached and its bounds. */
export interface NodeGrant {
  /** The node's IP address or host name: the gateway reaches its engines there, and nowhere else. */
  address: string;
  bounds: NodeBounds;
}

/** http://address:port, an IPv6 address bracketed. */
export function hostUrl(address: string, port: number): string {
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** Where the gateway sends an engine's requests: its node's address, the port its agent gave, /v1. */
export const engineEndpoint = (address: string, port: number) => `${hostUrl(address, port)}/v1`;
