// llmgw on a real Kubernetes control plane (test/support/kubernetes.ts: kube-apiserver, etcd, the
// scheduler, the controller manager, and kwok's fake 8-GPU nodes): its nodes come from the cluster, its
// replicas are pods bound where it chose, it plans around pods it does not run, replaces the replicas of
// a node that is no longer Ready, and plans again when kube-scheduler refuses a pod.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { activeReplicas, decisionSaying, FAST, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import {
  type KubernetesCluster,
  kubernetesMissing,
  LLMGW_NAMESPACE,
  startKubernetes,
} from '../support/kubernetes.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const skip = kubernetesMissing();
const NODES = ['k8s-1', 'k8s-2', 'k8s-3'];
const H100 = { 'nvidia.com/gpu.product': 'H100' };

/** llmgw's pods, not being deleted. */
async function ourPods(cluster: KubernetesCluster): Promise<V1Pod[]> {
  const pods = await cluster.api.listNamespacedPod({
    namespace: LLMGW_NAMESPACE,
    labelSelector: 'app.kubernetes.io/managed-by=llmgw',
  });
  return pods.items.filter((pod) => !pod.metadata?.deletionTimestamp);
}

/** The GPUs requested on each node by every pod bound there that has not ended (what kube-scheduler counts). */
async function gpusRequested(cluster: KubernetesCluster): Promise<Map<string, number>> {
  const pods = await cluster.api.listPodForAllNamespaces();
  const held = new Map<string, number>();
  for (const pod of pods.items) {
    const node = pod.spec?.nodeName;
    if (!node || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    const gpus = (pod.spec?.containers ?? []).reduce(
      (sum, container) => sum + Number(container.resources?.requests?.['nvidia.com/gpu'] ?? 0),
      0,
    );
    held.set(node, (held.get(node) ?? 0) + gpus);
  }
  return held;
}

const foreignPod = (name: string, node: string, gpus: number): V1Pod => ({
  metadata: { name },
  spec: {
    nodeSelector: { 'kubernetes.io/hostname': node },
    containers: [
      { name: 'train', image: 'trainer:latest', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } },
    ],
  },
});

describe('llmgw on Kubernetes', { skip }, () => {
  let cluster: KubernetesCluster;
  let stack: Stack;

  before(async () => {
    cluster = await startKubernetes();
    await cluster.addGpuNodes(NODES, 8, H100);
    stack = await startStack({
      worker: true,
      env: {
        ...FAST,
        LLMGW_KUBERNETES: cluster.kubeconfig,
        LLMGW_KUBERNETES_NAMESPACE: LLMGW_NAMESPACE,
        LLMGW_NODE_LOST_S: '3',
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await cluster?.stop();
  });

  const model = (name: string, extra: Record<string, unknown> = {}) =>
    ok(stack, 'PUT', `/api/v1/models/${name}`, {
      min_replicas: 0,
      max_replicas: 8,
      profiles: [gpuProfile('h100', 2, { default_concurrency: 1 })],
      ...extra,
    });

  it("keeps the cluster's nodes, and takes off their room what others' pods hold", async () => {
    await cluster.api.createNamespacedPod({ namespace: 'default', body: foreignPod('trainer', 'k8s-1', 6) });
    const nodes = await eventually('the cluster nodes, k8s-1 with 2 GPUs left', async () => {
      const listed = await ok<
        { name: string; driver: string; capacity: { gpus: number }; gpu_model: string }[]
      >(stack, 'GET', '/api/v1/nodes');
      const k8s1 = listed.find((node) => node.name === 'k8s-1');
      return listed.length === 3 && k8s1?.capacity.gpus === 2 ? listed : undefined;
    });
    for (const node of nodes) {
      assert.equal(node.driver, 'kubernetes');
      assert.equal(node.gpu_model, 'H100');
    }
  });

  it('runs replicas as pods bound where llmgw placed them, and plans around the foreign pod', async () => {
    await model('chat', { min_replicas: 5 });
    const replicas = await settledAt(stack, 'chat', 5, 60_000);
    const pods = await ourPods(cluster);
    assert.equal(pods.length, 5);
    for (const replica of replicas) {
      const pod = pods.find((p) => p.metadata?.labels?.['llmgw.dev/replica'] === replica.id);
      assert.ok(pod, `replica ${replica.id} has its pod`);
      assert.equal(pod.spec?.nodeName, replica.node, 'bound to the node llmgw chose');
      assert.equal(pod.metadata?.labels?.['llmgw.dev/model'], 'chat');
    }
    assert.ok(replicas.filter((r) => r.node === 'k8s-1').length <= 1, 'k8s-1 had room for one');
    for (const [node, gpus] of await gpusRequested(cluster))
      assert.ok(gpus <= 8, `${node} requests ${gpus} GPUs`);
    const served = await ok<{ id: string; endpoint: string }[]>(stack, 'GET', '/api/v1/replicas?model=chat');
    for (const replica of served.filter((r) => r.endpoint)) {
      const pod = pods.find((p) => p.metadata?.labels?.['llmgw.dev/replica'] === replica.id);
      assert.equal(replica.endpoint, `http://${pod?.status?.podIP}:8000/v1`, 'serves at its pod IP');
    }
  });

  it('deletes the pods of replicas it drains, with the drain grace', async () => {
    await model('chat', { min_replicas: 2, max_replicas: 2 });
    await settledAt(stack, 'chat', 2, 60_000);
    await eventually('3 of chat pods gone', async () => (await ourPods(cluster)).length === 2, 30_000);
  });

  it("plans again when kube-scheduler refuses a pod behind llmgw's back", async () => {
    // A taint llmgw does not read: the scheduler refuses llmgw's pods, and llmgw learns it from the pod.
    const refuse = [{ key: 'test/refuse', value: 'yes', effect: 'NoSchedule' }];
    for (const node of NODES) await cluster.setTaints(node, refuse);
    await model('batch', { min_replicas: 1 });
    await decisionSaying(stack, 'batch', /kube-scheduler could not place pod .*untolerated taint/, 60_000);
    for (const node of NODES) await cluster.setTaints(node, []);
    await settledAt(stack, 'batch', 1, 120_000);
  });

  it('replaces the replicas of a node that is no longer Ready', async () => {
    const before = await activeReplicas(stack, 'chat');
    const node = before[0].node;
    await cluster.makeNotReady(node);
    await decisionSaying(stack, 'chat', new RegExp(`node ${node} was not Ready for over 3 s`), 60_000);
    const after = await settledAt(stack, 'chat', 2, 60_000);
    assert.ok(
      after.every((replica) => replica.node !== node),
      `none left on ${node}`,
    );
  });
});
