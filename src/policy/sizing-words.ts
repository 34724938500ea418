import type { SizingPlan } from './sizing.ts';

// The words of a sizing plan, for `llmgw ctl model target` and the console's target preview alike.

/** What a plan with no step says in place of its steps. */
export const NO_REPLICA_TO_ADD = 'no replica to add';

/** Tokens/s to a tenth, as the plan's table shows them. */
const tokens = (value: number) => String(Math.round(value * 10) / 10);

/**
 * The lines after a plan's steps: what each step preempts, whether it reaches `wanted` tokens/s, then
 * each thing that stopped more replicas on a line of its own, so that a plan that fits all the same
 * does not read as a contradiction.
 */
export function sizingOutcome(sizing: SizingPlan, wanted: number): string[] {
  return [
    ...sizing.plan.flatMap((p) =>
      p.preempts ? [`${p.profile} preempts ${p.preempts.join(', ')} (replicas of a lower claim)`] : [],
    ),
    `reaches ${tokens(sizing.reaches_tokens_per_sec)} of ${wanted} tokens/s: ${sizing.fits ? 'fits' : 'does not fit'}`,
    ...sizing.blocked_by.map((why) => `blocked by: ${why}`),
  ];
}
