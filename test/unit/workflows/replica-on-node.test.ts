// A replica's start and drain on an agent's node (workflows/replica-on-node.ts) on Temporal's
// time-skipping test server: the engine work runs on the node's own task queue (a stand-in agent's
// worker), what came of it is settled by the control plane; a node without an agent fails the start
// once the schedule-to-start timeout passes instead of waiting forever; a drain waits out its grace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { NodeActivities, ReplicaOnNodeInput } from '../../../src/domain/node-work.ts';
import type { ReplicaReport } from '../../../src/store/replica-reports.ts';
import type { replicaOnNode } from '../../../src/workflows/replica-on-node.ts';
import { timeSkipping } from './workflow-harness.ts';

const CONTROL_PLANE = 'replica-on-node-test';

describe('a replica on an agent node', () => {
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;
  const settled: { replicaId: string; node: string; report: ReplicaReport; at: number }[] = [];
  const engineCalls: { op: string; replica: string; at: number }[] = [];
  let controlPlane: Worker;
  let runningControlPlane: Promise<void>;

  before(async () => {
    [env, bundle] = await timeSkipping();
    controlPlane = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue: CONTROL_PLANE,
      workflowBundle: bundle,
      activities: {
        settleReplica: async (input: { replicaId: string; node: string; report: ReplicaReport }) => {
          settled.push({ ...input, at: await env.currentTimeMs() });
        },
      },
    });
    runningControlPlane = controlPlane.run();
  });
  after(async () => {
    controlPlane?.shutdown();
    await runningControlPlane;
    await env?.teardown();
  });

  /** A stand-in agent: a worker on the node's task queue running `activities` while `body` runs. */
  async function withAgent(node: string, activities: NodeActivities, body: () => Promise<void>) {
    const agent = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue: `llmgw-node:${node}`,
      activities,
    });
    await agent.runUntil(body());
  }

  const input = (op: ReplicaOnNodeInput['op'], node: string, replica: string): ReplicaOnNodeInput => ({
    op,
    node,
    run: {
      replica,
      model: 'chat',
      profile: { name: 'gpu', resources: { gpus: 1 }, engine: { kind: 'sim' } },
    },
    startTimeoutS: 60,
    nodeLostS: 30,
    graceS: 20,
  });
  const run = (given: ReplicaOnNodeInput) =>
    env.client.workflow.execute<typeof replicaOnNode>('replicaOnNode', {
      taskQueue: CONTROL_PLANE,
      workflowId: `replica-${given.op}:${given.run.replica}`,
      args: [given],
    });
  const agentThat = (startEngine: NodeActivities['startEngine']): NodeActivities => ({
    startEngine,
    stopEngine: async ({ replica }) => {
      engineCalls.push({ op: 'stop', replica, at: await env.currentTimeMs() });
    },
    engineLog: async () => [],
  });

  it("starts the engine on the node's own queue and settles the replica ready with its port", async () => {
    await withAgent(
      'n1',
      agentThat(async ({ replica }) => ({ port: replica === 'r1' ? 8001 : 1 })),
      () => run(input('start', 'n1', 'r1')),
    );
    assert.deepEqual(settled.at(-1)?.report, { state: 'ready', port: 8001 });
    assert.equal(settled.at(-1)?.node, 'n1');
  });

  it("settles an engine that failed to start as failed, with the engine's own sentence, tried once", async () => {
    let tries = 0;
    await withAgent(
      'n2',
      agentThat(async () => {
        tries++;
        throw ApplicationFailure.nonRetryable(
          'the engine exited with code 1; its log ends: boom',
          'EngineFailed',
        );
      }),
      () => run(input('start', 'n2', 'r2')),
    );
    assert.equal(tries, 1);
    assert.deepEqual(settled.at(-1)?.report, {
      state: 'failed',
      reason: 'the engine exited with code 1; its log ends: boom',
    });
  });

  it('fails a start no agent takes within the node-lost window (and 10 s), instead of waiting forever', async () => {
    const began = await env.currentTimeMs();
    await run(input('start', 'nobody-here', 'r3'));
    assert.deepEqual(settled.at(-1)?.report, {
      state: 'failed',
      reason: 'no agent of node nobody-here took the start in time',
    });
    const waited = settled.at(-1)!.at - began;
    assert.ok(waited >= 40_000 && waited < 60_000, `gave up after ${waited} ms`);
  });

  it('drains: the engine serves for its grace period, then is stopped, then the replica is settled stopped', async () => {
    const began = await env.currentTimeMs();
    await withAgent(
      'n4',
      agentThat(async () => ({ port: 1 })),
      () => run(input('drain', 'n4', 'r4')),
    );
    const stop = engineCalls.find((call) => call.replica === 'r4');
    assert.ok(stop && stop.at - began >= 20_000, `stopped after ${stop && stop.at - began} ms`);
    assert.deepEqual(settled.at(-1)?.report, { state: 'stopped' });
    assert.equal(settled.at(-1)?.replicaId, 'r4');
  });
});
