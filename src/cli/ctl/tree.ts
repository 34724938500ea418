import type { components } from './api.gen.ts';
import type { Command } from './command.ts';
import { table } from './output.ts';
import { formatResourceOption, formatUsage } from './resources.ts';

/** A scope of the tree, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type TreeNode = components['schemas']['TreeNode'];

/** Depth first, each scope's name indented under its parent. */
function rows(nodes: TreeNode[], depth = 0): (string | null)[][] {
  return nodes.flatMap((node) => [
    [
      `${'  '.repeat(depth)}${node.name}`,
      node.kind,
      formatResourceOption(node.quota?.guarantee),
      formatResourceOption(node.quota?.limit),
      formatUsage(node.holds),
      formatUsage(node.borrowed),
      node.scope,
    ],
    ...rows(node.children, depth + 1),
  ]);
}

export const TREE_COMMANDS: Command[] = [
  {
    path: 'tree',
    summary: 'The tenancy tree: every org, team and project with its quota, what it holds and borrows.',
    examples: ['llmgw ctl tree', 'llmgw ctl tree -o yaml'],
    async run(ctx) {
      const tree = await ctx.api().get<TreeNode[]>('/tree');
      ctx.out.show(tree, () =>
        table(['SCOPE', 'KIND', 'GUARANTEE', 'LIMIT', 'HOLDS', 'BORROWED', 'KEY'], rows(tree), 'no orgs yet'),
      );
    },
  },
];
