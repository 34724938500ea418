import type { Replica } from '../domain/cluster.ts';
import type { ClusterDriver } from '../domain/cluster-driver.ts';
import type { Sql } from '../store/db.ts';
import { getNode } from '../store/nodes.ts';

/**
 * Hands each replica to the driver its node names: the simulated cluster, the node's agent, or the
 * Kubernetes cluster that has the node (when this worker is given one: LLMGW_KUBERNETES).
 */
export class DriverByNode implements ClusterDriver {
  constructor(
    private readonly sql: Sql,
    private readonly drivers: { sim: ClusterDriver; agent: ClusterDriver; kubernetes?: ClusterDriver },
  ) {}

  async start(replica: Replica): Promise<void> {
    await (await this.driverOf(replica)).start(replica);
  }

  async drain(replica: Replica): Promise<void> {
    await (await this.driverOf(replica)).drain(replica);
  }

  private async driverOf(replica: Replica): Promise<ClusterDriver> {
    const node = await getNode(this.sql, replica.node);
    const driver = this.drivers[node?.driver ?? 'sim'];
    if (!driver) {
      throw new Error(
        `node ${replica.node} is a Kubernetes cluster's, and this worker has none (set LLMGW_KUBERNETES)`,
      );
    }
    return driver;
  }
}
