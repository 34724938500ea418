import type { QuotaPreviewAnswer } from '../../contracts/schemas/quotas.ts';
import { PREEMPTION_SETTINGS, type Preemption } from '../../domain/quota.ts';
import type { components } from './api.gen.ts';
import type { Command, Input, OptionSpec } from './command.ts';
import { UsageError } from './errors.ts';
import { table } from './output.ts';
import { formatResourceOption, formatUsage, parseResources } from './resources.ts';

/** A quota, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type QuotaRow = components['schemas']['Quota'];

/** The server's warnings about a guarantee it accepted (nesting caps it), one line each. */
const warningLines = (warnings: string[] = []) => warnings.map((warning) => `warning: ${warning}`);

const SCOPE_HELP =
  'SCOPE is org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT (or the ID after the colon); ' +
  'a last segment alone (team:ml) works where it is unique.';
const RESOURCES_HELP = 'R is NAME=NUMBER[,NAME=NUMBER...] with NAME gpus, cores or memory_gib.';
const PREEMPTION_HELP =
  'P is lower-claim or never: whether a model under the scope that a limit or missing room blocks may ' +
  'drain replicas of other models with a strictly lower claim (priority, then floor, demand, surplus).';
const PRIORITY_HELP =
  "N orders the scope among its siblings (the scopes and models beneath the same parent): a sibling's " +
  "replicas of a lower priority give way to the scope's whatever their tiers. It counts against its " +
  'siblings only, and only whoever may change the quota sets it.';

const QUOTA_OPTIONS: Record<string, OptionSpec> = {
  guarantee: {
    type: 'string',
    value: 'R',
    description: 'resources guaranteed to the scope, e.g. gpus=8,cores=64',
  },
  limit: { type: 'string', value: 'R', description: 'the most the scope may hold, e.g. gpus=16' },
  preemption: {
    type: 'string',
    value: 'P',
    description: 'lower-claim (the default) or never: whether models under the scope may preempt',
  },
  priority: {
    type: 'string',
    value: 'N',
    description: "a whole number, 0 unless given: the scope's priority among its siblings",
  },
};

/** --priority as the API takes it; absent leaves it out (the quota gets 0). */
function priorityOption(input: Input): { priority?: number } {
  const given = input.values.priority as string | undefined;
  if (given === undefined) return {};
  const priority = Number(given);
  if (given.trim() === '' || !Number.isInteger(priority)) {
    throw new UsageError(`--priority ${given}: give a whole number, e.g. 10`);
  }
  return { priority };
}

/** --preemption as the API takes it; absent leaves it out (the quota gets the default). */
function preemptionOption(input: Input): { preemption?: Preemption } {
  const given = input.values.preemption as string | undefined;
  if (given === undefined) return {};
  if (!PREEMPTION_SETTINGS.includes(given as Preemption)) {
    throw new UsageError(`--preemption ${given}: give ${PREEMPTION_SETTINGS.join(' or ')}`);
  }
  return { preemption: given as Preemption };
}

/** The body of PUT /quotas and POST /quotas/preview. */
function quotaBody(input: Input) {
  const guarantee = input.values.guarantee as string | undefined;
  const limit = input.values.limit as string | undefined;
  const preemption = preemptionOption(input);
  const priority = priorityOption(input);
  if (
    guarantee === undefined &&
    limit === undefined &&
    preemption.preemption !== 'never' &&
    !priority.priority
  ) {
    throw new UsageError(
      'give --guarantee, --limit, both, --priority or --preemption never (to remove a quota: llmgw ctl quota rm SCOPE)',
    );
  }
  return {
    scope: input.positionals[0],
    ...(guarantee === undefined ? {} : { guarantee: parseResources(guarantee, '--guarantee') }),
    ...(limit === undefined ? {} : { limit: parseResources(limit, '--limit') }),
    ...preemption,
    ...priority,
  };
}

/** Quotas as a table, one row each, with what their scopes hold and borrow. */
const quotaTable = (quotas: QuotaRow[]) =>
  table(
    [
      'NAME',
      'SCOPE',
      'GUARANTEE',
      'LIMIT',
      'PREEMPTION',
      'PRIORITY',
      'HOLDS',
      'BORROWED',
      'UPDATED_BY',
      'UPDATED_AT',
    ],
    quotas.map((q) => [
      q.name,
      q.scope,
      formatResourceOption(q.guarantee),
      formatResourceOption(q.limit),
      q.preemption,
      String(q.priority ?? 0),
      formatUsage(q.holds),
      formatUsage(q.borrowed),
      q.updated_by,
      q.updated_at,
    ]),
    'no quotas',
  );

const listOr = (items: string[], none: string) => (items.length ? items.join(', ') : none);

function previewText(preview: QuotaPreviewAnswer): string {
  return [
    `if set, the quota of ${preview.scope} would:`,
    `  make borrowed:  ${listOr(preview.became_borrowed, 'no replica')}`,
    `  make protected: ${listOr(preview.became_protected, 'no replica')}`,
    `  leave reclaimable: ${listOr(
      preview.reclaimable.map((r) => `${r.replica} (${r.model}, ${formatResourceOption(r.resources)})`),
      'no replica',
    )}`,
    `  block: ${listOr(
      preview.blocked_models.map((b) => `${b.model} (${b.why})`),
      'no model',
    )}`,
    `  priority ${preview.priority.value} among its siblings: below ${listOr(preview.priority.above, 'none')}; ` +
      `equal to ${listOr(preview.priority.equal, 'none')}; above ${listOr(preview.priority.below, 'none')}`,
    ...warningLines(preview.warnings),
  ].join('\n');
}

export const QUOTA_COMMANDS: Command[] = [
  {
    path: 'quota list',
    summary: 'List quotas with what each scope holds and borrows.',
    examples: ['llmgw ctl quota list'],
    async run(ctx) {
      const quotas = await ctx.api().get<QuotaRow[]>('/quotas');
      ctx.out.show(quotas, () => quotaTable(quotas));
    },
  },
  {
    path: 'quota get',
    args: 'SCOPE',
    positionals: { min: 1, max: 1 },
    summary: "Show one scope's quota with what it holds and borrows.",
    details: SCOPE_HELP,
    examples: ['llmgw ctl quota get team:Acme/ml', 'llmgw ctl quota get team:Acme/ml -o json'],
    async run(ctx, { positionals: [scope] }) {
      const quota = await ctx.api().get<QuotaRow>(`/quotas/${encodeURIComponent(scope)}`);
      ctx.out.show(quota, () => quotaTable([quota]));
    },
  },
  {
    path: 'quota set',
    args: 'SCOPE',
    positionals: { min: 1, max: 1 },
    summary:
      "Set a scope's whole quota: what is not given is not set (no guarantee, no limit on it, preemption lower-claim, priority 0).",
    details: `${SCOPE_HELP}\n${RESOURCES_HELP}\nA guarantee protects replicas from reclaim; a limit stops new replicas.\n${PREEMPTION_HELP}\n${PRIORITY_HELP}`,
    options: QUOTA_OPTIONS,
    examples: [
      'llmgw ctl quota set team:Acme/ml --guarantee gpus=8,cores=64 --limit gpus=16',
      'llmgw ctl quota set org:Acme --limit gpus=64,memory_gib=4096',
      'llmgw ctl quota set team:Acme/batch --limit gpus=32 --preemption never',
      'llmgw ctl quota set team:Acme/ml --limit gpus=16 --priority 10',
    ],
    async run(ctx, input) {
      const { body } = await ctx
        .api()
        .call<{ scope: string; warnings?: string[] }>('PUT', '/quotas', quotaBody(input));
      ctx.out.show(body, () =>
        [`set the quota of ${input.positionals[0]} (${body.scope})`, ...warningLines(body.warnings)].join(
          '\n',
        ),
      );
    },
  },
  {
    path: 'quota rm',
    args: 'SCOPE',
    positionals: { min: 1, max: 1 },
    summary: "Remove a scope's quota.",
    details: SCOPE_HELP,
    examples: ['llmgw ctl quota rm team:Acme/ml'],
    async run(ctx, { positionals: [scope] }) {
      const { body } = await ctx
        .api()
        .call<{ removed: string }>('DELETE', `/quotas/${encodeURIComponent(scope)}`);
      ctx.out.show(body, () => `removed the quota of ${scope} (${body.removed})`);
    },
  },
  {
    path: 'quota preview',
    args: 'SCOPE',
    positionals: { min: 1, max: 1 },
    summary:
      'What setting this quota would change: replicas becoming borrowed or reclaimable, models blocked. Changes nothing.',
    details: `${SCOPE_HELP}\n${RESOURCES_HELP}\n${PREEMPTION_HELP}\n${PRIORITY_HELP}`,
    options: QUOTA_OPTIONS,
    examples: ['llmgw ctl quota preview team:Acme/ml --guarantee gpus=4'],
    async run(ctx, input) {
      const { body } = await ctx.api().call<QuotaPreviewAnswer>('POST', '/quotas/preview', quotaBody(input));
      ctx.out.show(body, () => previewText(body));
    },
  },
];
