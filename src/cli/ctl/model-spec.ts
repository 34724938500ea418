import type { components, paths } from './api.gen.ts';
import { applyFile, warningLines } from './apply-file.ts';
import type { Command } from './command.ts';
import { UsageError } from './errors.ts';
import { num, table } from './output.ts';
import { formatResourceOption } from './resources.ts';

// The API's answers as its OpenAPI document describes them (api.gen.ts, `npm run api-types`).
type Schemas = components['schemas'];
export type DecisionAnswer = Schemas['Decision'];
type ModelSummary = Schemas['ModelSummary'];
type ModelDetail = Schemas['Model'];
type OwnerAnswer =
  paths['/api/v1/models/{name}/owner']['post']['responses'][200]['content']['application/json'];

/** "2 ready, 1 starting": the states that have replicas. */
const replicaCounts = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ') || 'none';

const ownerText = (model: ModelSummary) => (model.owner ? `${model.owner_name} (${model.owner})` : '-');

/** The newest decision's sentence, and when the figures beside it are newer, which. */

/** "warning: limit of team Acme / ml: ...": what an accepted change should make its caller look at. */

export const decisionsTable = (decisions: DecisionAnswer[]) =>
  table(
    ['AT', 'ACTION', 'PROFILE', 'NODE', 'REASON'],
    decisions.map((d) => [d.at, d.action, d.profile, d.node, d.reason]),
    'no decisions yet',
  );

function detailText(model: ModelDetail): string {
  const fields = [
    ['name', model.name],
    ['owner', ownerText(model)],
    ['priority', model.priority],
    ['replicas', `${replicaCounts(model.replicas)} (min ${model.min_replicas}, max ${model.max_replicas})`],
    ['in flight', `${model.in_flight ?? 'unknown'} (capacity at SLO ${model.capacity_at_slo})`],
    ['target', model.target_tokens_per_sec === undefined ? '-' : `${model.target_tokens_per_sec} tokens/s`],
    ['status', model.status],
    ...(model.freshness ? [['decided', model.freshness]] : []),
  ];
  return [
    ...fields.map(([name, value]) => `${`${name}:`.padEnd(11)}${value}`),
    '',
    'profiles:',
    table(
      ['NAME', 'PRIORITY', 'RESOURCES', 'GPU_MODEL', 'DEFAULT_CONCURRENCY', 'ENGINE'],
      model.profiles.map((p) => [
        p.name,
        p.priority,
        formatResourceOption(p.resources),
        p.gpu_model,
        p.default_concurrency,
        p.runtime === undefined ? p.engine?.kind : `runtime ${p.runtime}`,
      ]),
    ),
    '',
    'replicas:',
    table(
      ['ID', 'PROFILE', 'NODE', 'STATE', 'RESOURCES', 'CREATED_AT'],
      (model.replicas_list ?? []).map((r) => [
        r.id,
        r.profile,
        r.node,
        r.state,
        formatResourceOption(r.resources),
        r.created_at,
      ]),
    ),
    '',
    'decisions:',
    decisionsTable(model.decisions ?? []),
    ...warningLines(model.warnings),
  ].join('\n');
}

/** The API path of a model, or of one of its parts (`/target`). */
export const modelPath = (name: string, part = '') => `/models/${encodeURIComponent(name)}${part}`;

export const MODEL_SPEC_COMMANDS: Command[] = [
  {
    path: 'model apply',
    summary: 'Create or update the models of a YAML file (PUT /api/v1/models/NAME for each).',
    details: [
      'The file holds one model per YAML document; an owner or target_tokens_per_sec left out keeps what',
      'the model has (null clears it), and so does a priority left out (0 for a new model). The priority',
      '(-1000000 to 1000000) orders models competing for one limit or node: a higher one keeps and takes',
      "room first. A profile's priority only orders the model's own profiles.",
      '  name: llama-70b',
      '  owner: team:Acme/ml',
      '  priority: 100',
      '  min_replicas: 1',
      '  max_replicas: 4',
      '  profiles:',
      '    - { name: h100, priority: 10, resources: { gpus: 4, cores: 32, memory_gib: 320 }, gpu_model: H100 }',
    ].join('\n'),
    options: {
      file: { type: 'string', short: 'f', value: 'FILE', description: 'the YAML file', required: true },
    },
    examples: ['llmgw ctl model apply -f model.yaml'],
    run: (ctx, input) => applyFile(ctx, input.values.file as string, 'model', (name) => modelPath(name)),
  },
  {
    path: 'model list',
    summary: 'List models with their priority, replicas, load, capacity at SLO, status and newest decision.',
    examples: ['llmgw ctl model list', 'llmgw ctl model list -o json'],
    async run(ctx) {
      const models = await ctx.api().get<ModelSummary[]>('/models');
      ctx.out.show(models, () =>
        table(
          [
            'NAME',
            'OWNER',
            'PRIORITY',
            'REPLICAS',
            'IN_FLIGHT',
            'CAPACITY_AT_SLO',
            'STATUS',
            'LAST_DECISION',
          ],
          models.map((m) => [
            m.name,
            m.owner_name ?? '-',
            m.priority,
            replicaCounts(m.replicas),
            num(m.in_flight, 0),
            m.capacity_at_slo,
            m.status,
            m.last_decision?.reason,
          ]),
          'no models',
          ctx.out.width,
        ),
      );
    },
  },
  {
    path: 'model get',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: 'One model: its profiles, replicas and newest decisions.',
    examples: ['llmgw ctl model get llama-70b', 'llmgw ctl model get llama-70b -o yaml'],
    async run(ctx, { positionals: [name] }) {
      const model = await ctx.api().get<ModelDetail>(modelPath(name));
      ctx.out.show(model, () => detailText(model));
    },
  },
  {
    path: 'model rm',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: 'Delete a model: its replicas are drained and stopped, then its reconciler ends.',
    examples: ['llmgw ctl model rm llama-70b'],
    async run(ctx, { positionals: [name] }) {
      const { body } = await ctx.api().call('DELETE', modelPath(name));
      ctx.out.show(
        body,
        () => `deleting model ${name}: its replicas drain and stop, then its reconciler ends`,
      );
    },
  },
  {
    path: 'model owner',
    args: 'NAME [SCOPE]',
    positionals: { min: 1, max: 2 },
    summary: 'Set the owner of a model (the scope whose quota it counts against), or clear it.',
    options: {
      clear: { type: 'boolean', description: 'the model has no owner: it counts toward the cluster only' },
    },
    examples: ['llmgw ctl model owner llama-70b team:Acme/ml', 'llmgw ctl model owner llama-70b --clear'],
    async run(ctx, { positionals: [name, scope], values }) {
      if ((scope === undefined) === !values.clear) throw new UsageError('give either SCOPE or --clear');
      const { body } = await ctx.api().call<OwnerAnswer>('POST', modelPath(name, '/owner'), {
        owner: scope ?? '',
      });
      // The answer gives the key; the model's summary names the scope as people know it: "team Acme / ml".
      const scopeName = body.owner
        ? `${body.owner.split(':')[0]} ${(await ctx.api().get<ModelSummary>(modelPath(name))).owner_name}`
        : null;
      ctx.out.show(body, () =>
        [
          scopeName ? `model ${name} is owned by ${scopeName} (${body.owner})` : `model ${name} has no owner`,
          ...warningLines(body.warnings),
        ].join('\n'),
      );
    },
  },
];
