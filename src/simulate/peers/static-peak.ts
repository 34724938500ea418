import type { PeerRule } from '../replica-count.ts';

/** A static allocation: the replicas the trace's peak needs, held the whole time (sized beforehand). */
export const staticPeak =
  (replicas: number): PeerRule =>
  () =>
    replicas;
