// Quotas on a real Kubernetes control plane (test/support/kubernetes.ts): a limit holds in the pods
// the API server has, and a guarantee reclaims borrowed replicas by deleting their pods before its own
// pods are created, so that the node is never asked for more than it has.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { labelValue } from '../../src/cluster/kubernetes/pod.ts';
import { decisions, FAST, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import {
  type KubernetesCluster,
  kubernetesMissing,
  LLMGW_NAMESPACE,
  startKubernetes,
} from '../support/kubernetes.ts';
import { type Stack, startStack } from '../support/stack.ts';

const skip = kubernetesMissing();
const WEB_LIMIT = 4;

const gpus = (pods: V1Pod[]) =>
  pods.reduce(
    (sum, pod) =>
      sum +
      (pod.spec?.containers ?? []).reduce(
        (n, c) => n + Number(c.resources?.requests?.['nvidia.com/gpu'] ?? 0),
        0,
      ),
    0,
  );

describe('quotas on Kubernetes', { skip }, () => {
  let cluster: KubernetesCluster;
  let stack: Stack;
  const seen: string[] = [];
  let polling: Promise<void> | undefined;
  let running = true;

  before(async () => {
    cluster = await startKubernetes();
    await cluster.addGpuNodes(['k8s-1'], 8, { 'nvidia.com/gpu.product': 'H100' });
    stack = await startStack({
      worker: true,
      env: { ...FAST, LLMGW_KUBERNETES: cluster.kubeconfig, LLMGW_KUBERNETES_NAMESPACE: LLMGW_NAMESPACE },
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    for (const team of ['ml', 'web', 'batch'])
      await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: team });
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/web', limit: { gpus: WEB_LIMIT } });
    // What the API server has, every 200 ms, for as long as the tests run.
    polling = (async () => {
      while (running) {
        const pods = (await cluster.api.listPodForAllNamespaces()).items.filter((pod) => pod.spec?.nodeName);
        const all = gpus(pods);
        const web = gpus(
          pods.filter((pod) => pod.metadata?.labels?.['llmgw.dev/owner'] === labelValue('team:Acme/web')),
        );
        if (all > 8) seen.push(`k8s-1's pods request ${all} GPUs of 8`);
        if (web > WEB_LIMIT) seen.push(`team web's pods request ${web} GPUs, past its limit`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
  });
  after(async () => {
    running = false;
    await polling;
    await stack?.stop();
    await cluster?.stop();
  });

  const model = (name: string, owner: string) =>
    ok(stack, 'PUT', `/api/v1/models/${name}`, {
      owner,
      min_replicas: 0,
      max_replicas: 8,
      profiles: [gpuProfile('h100', 2, { default_concurrency: 1 })],
    });
  const podsOf = async (name: string) =>
    (
      await cluster.api.listNamespacedPod({
        namespace: LLMGW_NAMESPACE,
        labelSelector: `llmgw.dev/model=${name}`,
      })
    ).items.filter((pod) => !pod.metadata?.deletionTimestamp);

  it('a limit holds: the limited team gets its limit in pods and no more', async () => {
    await model('web-chat', 'team:Acme/web');
    await ok(stack, 'POST', '/api/v1/models/web-chat/load', { in_flight: 10 });
    await settledAt(stack, 'web-chat', WEB_LIMIT / 2, 60_000);
    await model('batch-job', 'team:Acme/batch');
    await ok(stack, 'POST', '/api/v1/models/batch-job/load', { in_flight: 10 });
    await settledAt(stack, 'batch-job', 2, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal(gpus(await podsOf('web-chat')), WEB_LIMIT);
    assert.deepEqual(seen, []);
  });

  it('a guarantee reclaims borrowed replicas: their pods deleted, its own created, the node never over-asked', async () => {
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 4 } });
    await model('ml-chat', 'team:Acme/ml');
    await ok(stack, 'POST', '/api/v1/models/ml-chat/load', { in_flight: 2 });
    const ml = await settledAt(stack, 'ml-chat', 2, 90_000);
    assert.ok(
      (await decisions(stack, 'ml-chat')).some((d) => d.action === 'reclaim'),
      'ml-chat reclaimed',
    );
    const pods = await podsOf('ml-chat');
    assert.deepEqual(
      pods.map((pod) => pod.spec?.nodeName),
      ['k8s-1', 'k8s-1'],
    );
    assert.deepEqual(
      pods.map((pod) => pod.metadata?.labels?.['llmgw.dev/replica']).sort(),
      ml.map((replica) => replica.id).sort(),
    );
    assert.equal(
      gpus(await podsOf('web-chat')) + gpus(await podsOf('batch-job')),
      4,
      'the borrowers kept what was left',
    );
    assert.deepEqual(seen, []);
  });
});
