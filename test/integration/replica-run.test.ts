// The run that both drivers of real nodes (the agent's and Kubernetes') give a replica's start or drain
// (src/cluster/replica-step.ts replicaRun), read from a real store: its profile, its runtime as the admin
// defines it now (without who changed it when), the model's owner, and the start timeout of its runtime,
// else of its inline engine, else the default.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { replicaRun } from '../../src/cluster/replica-step.ts';
import { DEFAULT_START_TIMEOUT_S } from '../../src/contracts/schemas/engine.ts';
import type { Replica } from '../../src/domain/cluster.ts';
import type { Profile } from '../../src/domain/model.ts';
import type { Sql } from '../../src/store/db.ts';
import { putModel, removeModel } from '../../src/store/models.ts';
import { putRuntime } from '../../src/store/runtimes.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore } from '../support/stack.ts';

const RUNS = Number(process.env.LLMGW_REPLICA_RUN_RUNS ?? 30);

const replicaOf = (model: string, profile: string): Replica => ({
  id: `r-${model}`,
  model,
  profile,
  node: 'n1',
  resources: { gpus: 1 },
  state: 'starting',
  created_at: 0,
});

describe("a replica's run, as the node drivers give it", () => {
  let sql: Sql;
  let next = 0;
  before(async () => {
    sql = await freshStore();
  });
  after(async () => {
    await sql?.end();
    await stopOwnServices();
  });

  it('carries the profile, the runtime now, the owner and the start timeout that applies', async () => {
    const timeout = fc.option(fc.integer({ min: 1, max: 86_400 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('runtime', 'engine', 'neither'),
        timeout,
        timeout,
        fc.constantFrom(null, 'team:a' as const),
        async (runs, runtimeTimeout, engineTimeout, owner) => {
          const n = next++;
          const model = `m${n}`;
          const runtime = `rt${n}`;
          await putRuntime(
            sql,
            runtime,
            {
              kind: 'vllm',
              args: ['--port', '{port}'],
              ...(runtimeTimeout && { start_timeout_s: runtimeTimeout }),
            },
            'admin-token',
          );
          const profile: Profile = {
            name: 'p',
            priority: 1,
            resources: { gpus: 1 },
            ...(runs === 'runtime' && { runtime, params: { x: 1 } }),
            ...(runs === 'engine' && {
              engine: {
                kind: 'vllm',
                model: 'org/m',
                ...(engineTimeout && { start_timeout_s: engineTimeout }),
              },
            }),
          };
          await putModel(sql, { name: model, owner, min_replicas: 0, max_replicas: 1, profiles: [profile] });

          const got = await replicaRun(sql, replicaOf(model, 'p'));
          const expected =
            runs === 'runtime' ? runtimeTimeout : runs === 'engine' ? engineTimeout : undefined;
          assert.deepEqual(got, {
            run: {
              replica: `r-${model}`,
              model,
              profile,
              ...(runs === 'runtime' && {
                runtime: {
                  name: runtime,
                  kind: 'vllm',
                  args: ['--port', '{port}'],
                  ...(runtimeTimeout && { start_timeout_s: runtimeTimeout }),
                },
              }),
            },
            owner,
            startTimeoutS: expected ?? DEFAULT_START_TIMEOUT_S,
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('is none for a model or a profile removed meanwhile', async () => {
    const profile: Profile = { name: 'p', priority: 1, resources: { gpus: 1 } };
    await putModel(sql, { name: 'gone', min_replicas: 0, max_replicas: 1, profiles: [profile] });
    assert.equal(await replicaRun(sql, replicaOf('gone', 'other')), undefined);
    await removeModel(sql, 'gone');
    assert.equal(await replicaRun(sql, replicaOf('gone', 'p')), undefined);
  });
});
