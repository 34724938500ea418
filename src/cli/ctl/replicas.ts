import type { components } from './api.gen.ts';
import { queryString } from './client.ts';
import type { Command } from './command.ts';
import { table } from './output.ts';
import { formatResourceOption } from './resources.ts';

/** A replica, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type ReplicaRow = components['schemas']['Replica'];

export const REPLICA_COMMANDS: Command[] = [
  {
    path: 'replicas',
    summary:
      'List replicas, each saying whether a guarantee protects it (else it is borrowed and reclaimable).',
    options: {
      model: { type: 'string', value: 'M', description: "only this model's" },
      node: { type: 'string', value: 'N', description: 'only those on this node' },
      state: {
        type: 'string',
        value: 'S',
        description: 'only those in this state (pending, starting, ready, draining, ...)',
      },
    },
    examples: [
      'llmgw ctl replicas',
      'llmgw ctl replicas --model llama-70b',
      'llmgw ctl replicas --node gpu-a-1 --state ready',
    ],
    async run(ctx, { values }) {
      const replicas = await ctx
        .api()
        .get<ReplicaRow[]>(
          `/replicas${queryString({ model: values.model, node: values.node, state: values.state })}`,
        );
      ctx.out.show(replicas, () =>
        table(
          ['ID', 'MODEL', 'PROFILE', 'NODE', 'STATE', 'PROTECTED', 'RESOURCES', 'CREATED_AT', 'REASON'],
          replicas.map((r) => [
            r.id,
            r.model,
            r.profile,
            r.node,
            r.state,
            r.protected ? 'yes' : 'no',
            formatResourceOption(r.resources),
            r.created_at,
            // One line of it: a reason may end with the engine log's last lines.
            firstLine(r.reason),
          ]),
          'no replicas',
        ),
      );
    },
  },
  {
    path: 'replicas logs',
    args: 'ID',
    positionals: { min: 1, max: 1 },
    summary: "Show the last lines of a replica's engine log, read on its node by its agent.",
    options: { tail: { type: 'string', value: 'N', description: 'how many lines; default 100' } },
    examples: ['llmgw ctl replicas logs chat-1a2b3c4d', 'llmgw ctl replicas logs chat-1a2b3c4d --tail 20'],
    async run(ctx, { positionals: [id], values }) {
      const logs = await ctx
        .api()
        .get<{ lines: string[] }>(
          `/replicas/${encodeURIComponent(id)}/logs${queryString({ tail: values.tail })}`,
        );
      ctx.out.show(logs, () => logs.lines.join('\n'));
    },
  },
];

/** The first line of a reason, cut to fit a table; `ctl replicas -o json` has it whole. */
function firstLine(reason: string | null): string {
  const line = (reason ?? '').split('\n')[0];
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
