import { readClusterFile } from '../cluster/sim/cluster-file.ts';
import type { Sql } from '../store/db.ts';
import { putNode } from '../store/nodes.ts';

/**
 * Stores the nodes the worker's simulated cluster starts with: LLMGW_SIM_CLUSTER's; without it, `llmgw
 * dev`'s built-in demo cluster (`demoWhenUnset`), or none but those registered through the API, which it
 * says. An upsert: workers that load the same file at once agree.
 */
export async function loadSimCluster(
  sql: Sql,
  options: { file: string | undefined; demoWhenUnset: boolean; log: Pick<Console, 'info'> },
): Promise<void> {
  const { file, log } = options;
  if (file === undefined && !options.demoWhenUnset) {
    log.info(
      'simulated cluster: only the nodes registered through the API (PUT /api/v1/nodes/{name}); set LLMGW_SIM_CLUSTER to a YAML file of nodes to load them at start',
    );
    return;
  }
  const nodes = readClusterFile(file);
  for (const node of nodes) await putNode(sql, node);
  log.info(`simulated cluster: ${nodes.length} node(s) from ${file ?? 'the built-in demo cluster'}`);
}
