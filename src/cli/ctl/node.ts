import { parseClusterFile } from '../../cluster/sim/cluster-file.ts';
import type { components } from './api.gen.ts';
import type { Command } from './command.ts';
import { Failed } from './errors.ts';
import { table } from './output.ts';
import { formatResourceOption } from './resources.ts';

/** A node, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type NodeRow = components['schemas']['Node'];

const nodePath = (name: string, part = '') => `/nodes/${encodeURIComponent(name)}${part}`;

const nodesIn = (text: string, path: string) => {
  try {
    return parseClusterFile(text, path);
  } catch (error) {
    throw new Failed((error as Error).message);
  }
};

/** cordon and uncordon: the same call on a different path. */
const stateCommand = (verb: 'cordon' | 'uncordon', summary: string): Command => ({
  path: `node ${verb}`,
  args: 'NAME',
  positionals: { min: 1, max: 1 },
  summary,
  examples: [`llmgw ctl node ${verb} gpu-a-1`],
  async run(ctx, { positionals: [name] }) {
    const { body } = await ctx.api().call<{ state: string }>('POST', nodePath(name, `/${verb}`));
    ctx.out.show(body, () => `node ${name} is ${body.state}`);
  },
});

export const NODE_COMMANDS: Command[] = [
  {
    path: 'node apply',
    summary: 'Add or update the nodes of a cluster file (the simulated cluster format, LLMGW_SIM_CLUSTER).',
    details: [
      'nodes:',
      '  - name: gpu-a            # with count: 4 -> gpu-a-1 .. gpu-a-4',
      '    count: 4',
      '    gpu_model: H100',
      '    capacity: { gpus: 8, cores: 96, memory_gib: 1024 }',
    ].join('\n'),
    options: {
      file: { type: 'string', short: 'f', value: 'FILE', description: 'the YAML file', required: true },
    },
    examples: ['llmgw ctl node apply -f nodes.yaml'],
    async run(ctx, input) {
      const path = input.values.file as string;
      const applied: { name: string; created: boolean }[] = [];
      for (const node of nodesIn(ctx.readFile(path), path)) {
        const body = {
          capacity: node.capacity,
          ...(node.gpu_model ? { gpu_model: node.gpu_model } : {}),
          ...(Object.keys(node.labels).length ? { labels: node.labels } : {}),
        };
        const { status } = await ctx.api().call('PUT', nodePath(node.name), body);
        applied.push({ name: node.name, created: status === 201 });
      }
      ctx.out.show(applied, () =>
        applied.length
          ? applied.map((n) => `node ${n.name} ${n.created ? 'created' : 'updated'}`).join('\n')
          : `${path} holds no nodes`,
      );
    },
  },
  {
    path: 'node list',
    summary:
      'List nodes with their capacity, what runs (allocated), what is reserved and free, and their state.',
    examples: ['llmgw ctl node list'],
    async run(ctx) {
      const nodes = await ctx.api().get<NodeRow[]>('/nodes');
      ctx.out.show(nodes, () =>
        table(
          ['NAME', 'STATE', 'GPU_MODEL', 'CAPACITY', 'ALLOCATED', 'RESERVED', 'FREE', 'REPLICAS'],
          nodes.map((n) => [
            n.name,
            n.state,
            n.gpu_model,
            formatResourceOption(n.capacity),
            formatResourceOption(n.allocated),
            formatResourceOption(n.reserved),
            formatResourceOption(n.free),
            n.replicas,
          ]),
          'no nodes',
        ),
      );
    },
  },
  stateCommand('cordon', 'Place no new replica on a node (those running stay).'),
  stateCommand('uncordon', 'Place replicas on a node again.'),
  {
    path: 'node rm',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: 'Remove a node; the server refuses while replicas run there (cordon it first).',
    examples: ['llmgw ctl node rm gpu-a-1'],
    async run(ctx, { positionals: [name] }) {
      const { body } = await ctx.api().call('DELETE', nodePath(name));
      ctx.out.show(body, () => `removed node ${name}`);
    },
  },
];
