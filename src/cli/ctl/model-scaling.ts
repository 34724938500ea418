import { NO_REPLICA_TO_ADD, sizingOutcome } from '../../policy/sizing-words.ts';
import type { components } from './api.gen.ts';
import type { Command } from './command.ts';
import { UsageError } from './errors.ts';
import { type DecisionAnswer, decisionsTable, modelPath } from './model-spec.ts';
import { numberOption } from './options.ts';
import { num, table } from './output.ts';

/** A sizing plan, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type SizingPlan = components['schemas']['SizingPlan'];

function planText(name: string, wanted: number, sizing: SizingPlan, applied: boolean): string {
  return [
    table(
      ['PROFILE', 'REPLICAS', 'TOKENS_PER_SEC'],
      sizing.plan.map((p) => [p.profile, p.replicas, num(p.tokens_per_sec)]),
      NO_REPLICA_TO_ADD,
    ),
    ...sizingOutcome(sizing, wanted),
    applied
      ? `${wanted} tokens/s is now the target of ${name}`
      : 'nothing changed; --apply makes it the target',
  ].join('\n');
}

/** Sizing, load reports and the decision history: how a model is scaled. */
export const MODEL_SCALING_COMMANDS: Command[] = [
  {
    path: 'model target',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary:
      'Plan the replicas a throughput needs, per profile, within limits and free room; --apply makes it the target, --clear removes it.',
    options: {
      'tokens-per-sec': {
        type: 'string',
        value: 'T',
        description: 'the throughput wanted (output tokens/s)',
      },
      apply: { type: 'boolean', description: "store T as the model's target throughput" },
      clear: { type: 'boolean', description: 'the model has no target throughput any more' },
    },
    examples: [
      'llmgw ctl model target llama-70b --tokens-per-sec 5000',
      'llmgw ctl model target llama-70b --tokens-per-sec 5000 --apply',
      'llmgw ctl model target llama-70b --clear',
    ],
    async run(ctx, input) {
      const [name] = input.positionals;
      if (input.values.clear) {
        if (input.values['tokens-per-sec'] !== undefined || input.values.apply)
          throw new UsageError('give either --tokens-per-sec (with --apply or not) or --clear');
        const { body } = await ctx.api().call('DELETE', modelPath(name, '/target'));
        ctx.out.show(body, () => `${name} has no target throughput`);
        return;
      }
      const wanted = numberOption(input, 'tokens-per-sec', { positive: true });
      if (wanted === undefined) throw new UsageError('model target needs --tokens-per-sec or --clear');
      const apply = input.values.apply === true;
      const { body } = await ctx
        .api()
        .call<SizingPlan>('POST', modelPath(name, '/target'), { tokens_per_sec: wanted, apply });
      ctx.out.show(body, () => planText(name, wanted, body, apply));
    },
  },
  {
    path: 'model decisions',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: "A model's decisions, newest first: what its reconciler did and why.",
    options: { limit: { type: 'string', value: 'N', description: 'how many (default 50, at most 1000)' } },
    examples: [
      'llmgw ctl model decisions llama-70b',
      'llmgw ctl model decisions llama-70b --limit 5 -o json',
    ],
    async run(ctx, input) {
      const [name] = input.positionals;
      const limit = numberOption(input, 'limit', { integer: true, min: 1 }, 50);
      const decisions = await ctx.api().get<DecisionAnswer[]>(modelPath(name, `/decisions?limit=${limit}`));
      ctx.out.show(decisions, () => decisionsTable(decisions));
    },
  },
  {
    path: 'model load',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary:
      'Report the requests in flight for a model, as a gateway does (the latest report of each source counts).',
    details: 'Reports expire after the staleness bound (60 s by default); send them periodically.',
    options: {
      'in-flight': { type: 'string', value: 'N', description: 'requests being served', required: true },
      waiting: { type: 'string', value: 'N', description: 'requests queued (default 0)' },
      source: { type: 'string', value: 'NAME', description: 'who reports, e.g. gw-1 (default: default)' },
    },
    examples: [
      'llmgw ctl model load llama-70b --in-flight 12',
      'llmgw ctl model load llama-70b --in-flight 12 --waiting 3 --source gw-1',
    ],
    async run(ctx, input) {
      const [name] = input.positionals;
      const inFlight = numberOption(input, 'in-flight', { integer: true, min: 0 })!;
      const waiting = numberOption(input, 'waiting', { integer: true, min: 0 });
      const source = input.values.source as string | undefined;
      const report = {
        in_flight: inFlight,
        ...(waiting === undefined ? {} : { waiting }),
        ...(source ? { source } : {}),
      };
      const { body } = await ctx.api().call('POST', modelPath(name, '/load'), report);
      ctx.out.show(
        body,
        () =>
          `reported ${inFlight} in flight${waiting ? `, ${waiting} waiting` : ''} for ${name}${source ? ` from ${source}` : ''}`,
      );
    },
  },
];
