// Issue 20: nested quotas that cannot all be honoured are accepted with warnings, whichever of the two
// scopes the quota being set is (POLICY.md "Guarantees nest"; the Limit section for limits above).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Quota } from '../../../src/domain/quota.ts';
import { scopeLabel } from '../../../src/domain/scope-names.ts';
import { grantWarnings } from '../../../src/policy/guarantee-grants.ts';
import { buildView } from '../../../src/policy/view.ts';
import { cores, gpus, quota, SCOPES, world } from './fixtures.ts';

/** The warnings for setting `next` where `stored` are the quotas. */
function warn(stored: Quota[], next: Quota): string[] {
  const view = buildView(world({ scopes: SCOPES, quotas: stored }));
  return grantWarnings(view, next, (key) => scopeLabel(view.scopes, key));
}

const CAPS_TEAM = 'guaranteed to team Acme / ml, which caps what it protects';
const NOT_AT_ONCE = 'not all of them can be honoured at once';

describe('grantWarnings', () => {
  const cases: { name: string; stored: Quota[]; next: Quota; warnings: string[] }[] = [
    {
      name: 'a guarantee within its parent warns of nothing',
      stored: [quota('team:ml', gpus(8), gpus(16)), quota('project:serving', gpus(4))],
      next: quota('project:training', gpus(4)),
      warnings: [],
    },
    {
      name: "a child's guarantee above its parent's guarantee is capped",
      stored: [quota('team:ml', gpus(8))],
      next: quota('project:training', gpus(10)),
      warnings: [
        `the guarantee of 10 GPUs is above the 8 GPUs ${CAPS_TEAM}`,
        `the guarantees beneath team Acme / ml add up to 10 GPUs, more than its own guarantee of 8 GPUs: ${NOT_AT_ONCE}`,
      ],
    },
    {
      name: "a child's guarantee above its parent's limit can never be used in full",
      stored: [quota('team:ml', undefined, gpus(8))],
      next: quota('project:training', gpus(10)),
      warnings: [
        'the guarantee of 10 GPUs is above the limit of 8 GPUs on team Acme / ml, so it can never be used in full',
      ],
    },
    {
      name: "a guarantee above a grandparent's limit, each dimension on its own",
      stored: [quota('org:acme', undefined, gpus(4, { cores: 64 }))],
      next: quota('project:training', gpus(6, { cores: 32 })),
      warnings: [
        'the guarantee of 6 GPUs is above the limit of 4 GPUs on org Acme, so it can never be used in full',
      ],
    },
    {
      name: 'a limit on another dimension than the guarantee bounds nothing',
      stored: [quota('team:ml', undefined, gpus(1))],
      next: quota('project:training', cores(32)),
      warnings: [],
    },
    {
      name: "only the nearest guaranteed ancestor caps (the team's own excess was told when it was set)",
      stored: [quota('org:acme', gpus(4)), quota('team:ml', gpus(10))],
      next: quota('project:training', gpus(8)),
      warnings: [],
    },
    {
      name: "lowering a parent's limit below a child's guarantee",
      stored: [quota('project:training', gpus(10))],
      next: quota('team:ml', undefined, gpus(8)),
      warnings: [
        'the guarantee of 10 GPUs on project Acme/ml/training is above the limit of 8 GPUs on team Acme / ml, so it can never be used in full',
      ],
    },
    {
      name: "lowering a parent's guarantee below a child's, and below its children's together",
      stored: [
        quota('team:ml', gpus(8)),
        quota('project:training', gpus(3)),
        quota('project:serving', gpus(2)),
      ],
      next: quota('team:ml', gpus(2)),
      warnings: [
        `the guarantee of 3 GPUs on project Acme/ml/training is above the 2 GPUs ${CAPS_TEAM}`,
        `the guarantees beneath team Acme / ml add up to 5 GPUs, more than its own guarantee of 2 GPUs: ${NOT_AT_ONCE}`,
      ],
    },
    {
      name: "an org's limit below a grandchild's guarantee",
      stored: [quota('project:serving', gpus(6))],
      next: quota('org:acme', undefined, gpus(4)),
      warnings: [
        'the guarantee of 6 GPUs on project Acme/ml/serving is above the limit of 4 GPUs on org Acme, so it can never be used in full',
      ],
    },
    {
      name: 'a guarantee set beneath a parent that sets none stands alone',
      stored: [],
      next: quota('project:training', gpus(1000)),
      warnings: [],
    },
  ];
  for (const { name, stored, next, warnings } of cases) {
    it(name, () => assert.deepEqual(warn(stored, next), warnings));
  }
});
