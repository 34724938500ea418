import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { ResourcesSchema } from '../../contracts/schemas/resources.ts';
import type { ClusterNode } from '../../domain/cluster.ts';

const NodeGroupSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,55}$/),
  count: z.number().int().min(1).max(10_000).optional(),
  gpu_model: z.string().min(1).optional(),
  capacity: ResourcesSchema,
  labels: z.record(z.string(), z.string()).optional(),
});
const ClusterFileSchema = z.strictObject({ nodes: z.array(NodeGroupSchema).default([]) });

/** The cluster `llmgw dev` simulates when LLMGW_SIM_CLUSTER is not set. */
export const DEMO_CLUSTER = `
nodes:
  - name: gpu-h100
    count: 2
    gpu_model: H100
    capacity: { gpus: 8, cores: 96, memory_gib: 1024 }
  - name: gpu-l4
    count: 2
    gpu_model: L4
    capacity: { gpus: 4, cores: 48, memory_gib: 192 }
  - name: cpu
    count: 2
    capacity: { cores: 64, memory_gib: 256 }
`;

/** Nodes of a cluster file; `count: N` expands `name` to name-1 .. name-N. An empty file means no nodes. */
export function parseClusterFile(text: string, source = 'the cluster file'): Omit<ClusterNode, 'state'>[] {
  const parsed = ClusterFileSchema.safeParse(parse(text) ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${source}: ${issue.path.join('.') || 'the file'}: ${issue.message}`);
  }
  return parsed.data.nodes.flatMap((group) => {
    const names = group.count
      ? Array.from({ length: group.count }, (_, i) => `${group.name}-${i + 1}`)
      : [group.name];
    return names.map((name) => ({
      name,
      capacity: group.capacity,
      gpu_model: group.gpu_model ?? null,
      labels: group.labels ?? {},
    }));
  });
}

export function readClusterFile(path: string | undefined): Omit<ClusterNode, 'state'>[] {
  return path === undefined
    ? parseClusterFile(DEMO_CLUSTER, 'the demo cluster')
    : parseClusterFile(readFileSync(path, 'utf8'), path);
}
