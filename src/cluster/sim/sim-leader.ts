import type { LeaseHolder } from '../../store/lease.ts';
import type { SimCluster } from './sim-cluster.ts';

/**
 * Runs the simulated cluster (its ticks and its engines) only while this worker holds the sim-cluster
 * lease, so that however many workers run, one moves replicas along and serves them. The cluster keeps
 * nothing in memory but its engines, which a new holder starts again for the replicas the store has.
 */
export class SimClusterLeader implements LeaseHolder {
  constructor(
    private readonly sim: Pick<SimCluster, 'run' | 'stop'>,
    private readonly worker: string,
    private readonly onLeader: (leads: boolean) => void,
    private readonly log: Pick<Console, 'info'>,
  ) {}

  won(): void {
    this.log.info(`sim cluster: ${this.worker} holds the lease; it runs the simulated cluster`);
    this.onLeader(true);
    this.sim.run();
  }

  async lost(reason: string): Promise<void> {
    this.onLeader(false);
    await this.sim.stop();
    this.log.info(`sim cluster: ${this.worker} gave the lease up (${reason}); its simulated cluster stopped`);
  }
}
