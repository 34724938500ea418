// An `llmgw worker` running replicas as pods on a real Kubernetes control plane is killed (SIGKILL) in
// the middle of a burst and started again: what it left (pods under way, a pod whose replica llmgw does
// not know) is adopted or deleted, and the models end at exactly the replicas wanted, each with one pod.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FAST, gpuProfile, ok } from '../support/cluster.ts';
import {
  type KubernetesCluster,
  kubernetesMissing,
  LLMGW_NAMESPACE,
  startKubernetes,
} from '../support/kubernetes.ts';
import { emptyDatabase, type LlmgwProcess, runLlmgw } from '../support/split-stack.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const skip = kubernetesMissing();
const MODELS = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
/** 9 in flight at 3 per replica: 3 replicas of 1 GPU each, 30 GPUs of the 32. */
const BURST = { in_flight: 9, per_replica: 3, replicas: 3 };

describe('a worker killed mid-burst on Kubernetes', { skip }, () => {
  let cluster: KubernetesCluster;
  let stack: Stack;
  let databaseUrl: string;
  const workers: LlmgwProcess[] = [];

  const startWorker = () => {
    const worker = runLlmgw('worker', {
      ...FAST,
      LLMGW_LOAD_STALE_S: '600',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.config.temporalNamespace,
      LLMGW_TASK_QUEUE: stack.config.taskQueue,
      LLMGW_KUBERNETES: cluster.kubeconfig,
      LLMGW_KUBERNETES_NAMESPACE: LLMGW_NAMESPACE,
    });
    workers.push(worker);
    return worker;
  };

  const replicas = () => ok<{ id: string; model: string; state: string }[]>(stack, 'GET', '/api/v1/replicas');
  const livePods = async () =>
    (
      await cluster.api.listNamespacedPod({
        namespace: LLMGW_NAMESPACE,
        labelSelector: 'app.kubernetes.io/managed-by=llmgw',
      })
    ).items.filter((pod) => !pod.metadata?.deletionTimestamp);

  before(async () => {
    cluster = await startKubernetes();
    await cluster.addGpuNodes(['k8s-1', 'k8s-2', 'k8s-3', 'k8s-4'], 8, { 'nvidia.com/gpu.product': 'H100' });
    databaseUrl = await emptyDatabase();
    stack = await startStack({ databaseUrl, env: { ...FAST, LLMGW_LOAD_STALE_S: '600' } });
  });
  after(async () => {
    for (const worker of workers) await worker.stop();
    await stack?.stop();
    await cluster?.stop();
  });

  it('adopts its pods, deletes the orphan with an audit entry, and doubles nothing', async () => {
    const first = startWorker();
    await eventually(
      'the worker keeps the cluster nodes',
      async () => {
        const nodes = await ok<unknown[]>(stack, 'GET', '/api/v1/nodes');
        return nodes.length === 4;
      },
      60_000,
    );
    const profile = gpuProfile('h100', 1, { default_concurrency: BURST.per_replica });
    for (const name of MODELS) {
      await ok(stack, 'PUT', `/api/v1/models/${name}`, {
        min_replicas: 1,
        max_replicas: BURST.replicas,
        profiles: [profile],
      });
    }
    await eventually(
      'every model at one ready replica',
      async () => (await replicas()).filter((r) => r.state === 'ready').length === MODELS.length,
      120_000,
    );

    // A pod with llmgw's labels whose replica llmgw never had (a start of a lost store, say).
    await cluster.api.createNamespacedPod({
      namespace: LLMGW_NAMESPACE,
      body: {
        metadata: {
          name: 'llmgw-orphan0000',
          labels: { 'app.kubernetes.io/managed-by': 'llmgw', 'llmgw.dev/replica': 'orphan0000' },
        },
        spec: { containers: [{ name: 'engine', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    await Promise.all(
      MODELS.map((name) => ok(stack, 'POST', `/api/v1/models/${name}/load`, { in_flight: BURST.in_flight })),
    );
    await eventually(
      'the burst under way',
      async () => (await replicas()).length >= MODELS.length + 8,
      60_000,
    );
    first.child.kill('SIGKILL');
    startWorker();

    const wanted = MODELS.length * BURST.replicas;
    const settled = await eventually(
      'every model at the replicas it wants, all ready',
      async () => {
        const all = (await replicas()).filter(
          (r) => !['stopped', 'failed', 'crashed', 'lost'].includes(r.state),
        );
        return all.length === wanted && all.every((r) => r.state === 'ready') ? all : undefined;
      },
      180_000,
    ).catch(async (error) => {
      const states = new Map<string, number>();
      for (const r of await replicas()) states.set(r.state, (states.get(r.state) ?? 0) + 1);
      const stuck = (await replicas()).filter((r) => r.state === 'starting');
      const described = await Promise.all(
        stuck.map(async (r) => {
          const start = await stack.temporal.workflow
            .getHandle(`replica-start:${r.id}`)
            .describe()
            .then(
              (d) =>
                `${d.status.name} pending ${JSON.stringify(d.raw.pendingActivities?.map((a) => [a.activityType?.name, a.attempt, a.lastFailure?.message]))}`,
            )
            .catch((e) => `no workflow (${String(e)})`);
          const pod = await cluster.api
            .readNamespacedPod({ name: `llmgw-${r.id}`, namespace: LLMGW_NAMESPACE })
            .then((p) => `${p.status?.phase} ${JSON.stringify(p.status?.conditions)}`)
            .catch((e) => `no pod (${String(e).slice(0, 80)})`);
          return `${r.id}: workflow ${start}; pod ${pod}`;
        }),
      );
      const outputs = workers.map(
        (w, i) => `--- worker ${i}\n${w.output().split('\n').slice(-30).join('\n')}`,
      );
      throw new Error(
        `${String(error)}; replicas by state: ${JSON.stringify([...states])}\n${described.join('\n')}\n${outputs.join('\n')}`,
      );
    });
    for (const name of MODELS)
      assert.equal(settled.filter((r) => r.model === name).length, BURST.replicas, name);
    // Exactly one pod per replica wanted, and none besides.
    const pods = await eventually(
      'one pod per replica, no other',
      async () => {
        const live = await livePods();
        return live.length === wanted ? live : undefined;
      },
      60_000,
    );
    const podReplicas = pods.map((pod) => pod.metadata?.labels?.['llmgw.dev/replica']).sort();
    assert.deepEqual(podReplicas, settled.map((r) => r.id).sort());
    const audited = await stack.sql`
      select actor from audit_log where action = 'kubernetes.orphan-pod.delete'
        and target = ${`pod ${LLMGW_NAMESPACE}/llmgw-orphan0000`}`;
    assert.equal(audited.length, 1, 'the orphan was deleted with one audit entry');
  });
});
