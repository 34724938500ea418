import { type ClusterNode, type Replica, RUNNING_STATES } from '../domain/cluster.ts';
import type { Resources } from '../domain/resources.ts';
import { add, complete, exceeding, subtract, sum } from './resources.ts';

/** What a node's active replicas hold, with what runs on the machine apart from what is only reserved. */
export interface NodeUsage {
  /** Starting, ready and draining replicas: engines that hold their resources on the machine. */
  running: Required<Resources>;
  /** Pending replicas: room reserved for replicas that have not started. */
  reserved: Required<Resources>;
  /** running + reserved. */
  allocated: Required<Resources>;
  /** capacity - allocated (negative while a reclaim's victims drain next to its reservation). */
  free: Required<Resources>;
  /** What runs exceeds the capacity on some dimension: the promise POLICY.md makes is broken. */
  overcommitted: boolean;
}

export function nodeUsage(node: ClusterNode, onNode: readonly Replica[]): NodeUsage {
  const capacity = complete(node.capacity);
  const running = complete(
    sum(onNode.filter((r) => RUNNING_STATES.includes(r.state)).map((r) => r.resources)),
  );
  const reserved = complete(sum(onNode.filter((r) => r.state === 'pending').map((r) => r.resources)));
  const allocated = complete(add(running, reserved));
  return {
    running,
    reserved,
    allocated,
    free: complete(subtract(capacity, allocated)),
    overcommitted: exceeding(running, capacity) !== null,
  };
}
