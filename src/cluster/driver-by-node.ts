import type { Replica } from '../domain/cluster.ts';
import type { ClusterDriver } from '../domain/cluster-driver.ts';
import type { Sql } from '../store/db.ts';
import { getNode } from '../store/nodes.ts';

/** Hands each replica to the driver its node names: the simulated cluster, or the node's agent. */
export class DriverByNode implements ClusterDriver {
  constructor(
    private readonly sql: Sql,
    private readonly drivers: { sim: ClusterDriver; agent: ClusterDriver },
  ) {}

  async start(replica: Replica): Promise<void> {
    await (await this.driverOf(replica)).start(replica);
  }

  async drain(replica: Replica): Promise<void> {
    await (await this.driverOf(replica)).drain(replica);
  }

  private async driverOf(replica: Replica): Promise<ClusterDriver> {
    const node = await getNode(this.sql, replica.node);
    return this.drivers[node?.driver ?? 'sim'];
  }
}
