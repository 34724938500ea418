import { type ClusterNode, type Replica, RUNNING_STATES } from '../domain/cluster.ts';
import type { Resources } from '../domain/resources.ts';
import { add, complete, exceeding, subtract, sum } from './resources.ts';

/** What a node's active replicas hold: what runs on the machine apart from what is only reserved. */
export interface NodeUsage {
  /** Starting, ready and draining replicas: engines that hold their resources on the machine. */
  allocated: Required<Resources>;
  /** Pending replicas: room reserved for replicas that have not started. */
  reserved: Required<Resources>;
  /** capacity - allocated - reserved (negative while a reclaim's victims drain beside its reservation). */
  free: Required<Resources>;
  /** What runs exceeds the capacity on some dimension: the promise POLICY.md makes is broken. */
  overcommitted: boolean;
}

export function nodeUsage(node: ClusterNode, onNode: readonly Replica[]): NodeUsage {
  const capacity = complete(node.capacity);
  const holding = (states: readonly Replica['state'][]) =>
    complete(sum(onNode.filter((r) => states.includes(r.state)).map((r) => r.resources)));
  const allocated = holding(RUNNING_STATES);
  const reserved = holding(['pending']);
  return {
    allocated,
    reserved,
    free: complete(subtract(capacity, add(allocated, reserved))),
    overcommitted: exceeding(allocated, capacity) !== null,
  };
}
