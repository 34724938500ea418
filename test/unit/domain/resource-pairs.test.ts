import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseCapacity } from '../../../src/agent/gpus.ts';
import { UsageError } from '../../../src/cli/ctl/errors.ts';
import { formatResourceOption, parseResources } from '../../../src/cli/ctl/resources.ts';
import { parseResourcePairs } from '../../../src/domain/resource-pairs.ts';

describe('resource pairs (one parser for the agent and the CLI)', () => {
  it('read back what formatResources writes', () => {
    const amount = fc.integer({ min: 0, max: 10_000 });
    fc.assert(
      fc.property(
        fc.record({ gpus: amount, cores: amount, memory_gib: amount }, { requiredKeys: ['gpus'] }),
        (resources) => {
          assert.deepEqual(parseResourcePairs(formatResourceOption(resources), '--x'), { ...resources });
        },
      ),
    );
  });

  it('give the agent and the CLI the same sentence for the same mistake', () => {
    for (const text of ['gpus', 'tpus=4', 'gpus=many', 'gpus=1,gpus=2']) {
      const agent = (() => {
        try {
          parseCapacity(text);
        } catch (error) {
          return (error as Error).message;
        }
      })();
      assert.throws(
        () => parseResources(text, '--capacity'),
        (error) => error instanceof UsageError && error.message === agent,
        text,
      );
    }
  });
});
