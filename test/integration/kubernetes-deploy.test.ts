// deploy/kubernetes applied to a real API server (test/support/kubernetes.ts): every object passes a
// server-side dry run (the ServiceMonitor's kind only exists with the Prometheus Operator), and the
// worker's ServiceAccount, holding a token of its own, can do what the driver does and nothing more.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { statusOf } from '../../src/cluster/kubernetes/pod-activities.ts';
import {
  type KubernetesCluster,
  kubernetesMissing,
  LLMGW_NAMESPACE,
  startKubernetes,
} from '../support/kubernetes.ts';

const skip = kubernetesMissing();
const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'kubernetes');
const WORKER = `system:serviceaccount:${LLMGW_NAMESPACE}:llmgw-worker`;

function manifests(): KubernetesObject[] {
  const files = readdirSync(DEPLOY).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(DEPLOY, file), 'utf8')).map((doc) => doc.toJS() as KubernetesObject),
  );
}

describe('deploy/kubernetes on a real API server', { skip }, () => {
  let cluster: KubernetesCluster;

  before(async () => {
    cluster = await startKubernetes();
  });
  after(() => cluster?.stop());

  it('passes a server-side dry run, object by object', async () => {
    const objects = KubernetesObjectApi.makeApiClient(cluster.kube);
    const applied: string[] = [];
    for (const object of manifests()) {
      if (object.apiVersion === 'monitoring.coreos.com/v1') continue;
      // The harness made the namespace already: a dry run of it would say it exists.
      if (object.kind === 'Namespace') continue;
      await objects.create(object, undefined, 'All');
      applied.push(`${object.kind}/${object.metadata?.name}`);
    }
    for (const kind of [
      'Deployment/llmgw-api',
      'Deployment/llmgw-worker',
      'ClusterRole/llmgw-worker',
      'Role/llmgw-worker-pods',
    ]) {
      assert.ok(applied.includes(kind), `${kind} was checked`);
    }
  });

  describe("the worker's ServiceAccount", () => {
    let worker: CoreV1Api;

    before(async () => {
      const objects = KubernetesObjectApi.makeApiClient(cluster.kube);
      for (const object of manifests().filter((o) =>
        ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind ?? ''),
      )) {
        await objects.create(object);
      }
      const token = await cluster.api.createNamespacedServiceAccountToken({
        name: 'llmgw-worker',
        namespace: LLMGW_NAMESPACE,
        body: { spec: { audiences: [], expirationSeconds: 3600 } },
      });
      const kube = new KubeConfig();
      kube.loadFromOptions({
        clusters: [{ name: 'test', server: cluster.server, caFile: cluster.caFile }],
        users: [{ name: 'worker', token: token.status?.token }],
        contexts: [{ name: 'test', cluster: 'test', user: 'worker' }],
        currentContext: 'test',
      });
      worker = kube.makeApiClient(CoreV1Api);
    });

    it('does what the driver does: lists nodes and pods, creates and deletes pods in its namespace', async () => {
      await worker.listNode();
      await worker.listPodForAllNamespaces();
      await worker.listNamespacedPod({ namespace: LLMGW_NAMESPACE });
      await worker.createNamespacedPod({
        namespace: LLMGW_NAMESPACE,
        body: {
          metadata: { name: 'rbac-check' },
          spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
        },
      });
      await worker.readNamespacedPod({ name: 'rbac-check', namespace: LLMGW_NAMESPACE });
      await worker.deleteNamespacedPod({
        name: 'rbac-check',
        namespace: LLMGW_NAMESPACE,
        gracePeriodSeconds: 0,
      });
    });

    it('is refused what it does not need', async () => {
      const refused = async (what: string, call: () => Promise<unknown>) => {
        await assert.rejects(call, (error) => statusOf(error) === 403, `${what} is refused`);
      };
      await refused('a pod in another namespace', () =>
        worker.createNamespacedPod({
          namespace: 'default',
          body: { metadata: { name: 'x' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        }),
      );
      await refused('deleting a pod elsewhere', () =>
        worker.deleteNamespacedPod({ name: 'x', namespace: 'default' }),
      );
      await refused('reading a pod elsewhere', () =>
        worker.readNamespacedPod({ name: 'x', namespace: 'default' }),
      );
      await refused('changing a node', () => worker.deleteNode({ name: 'x' }));
      await refused('secrets', () => worker.listNamespacedSecret({ namespace: LLMGW_NAMESPACE }));
      await refused('services', () =>
        worker.createNamespacedService({
          namespace: LLMGW_NAMESPACE,
          body: { metadata: { name: 'x' }, spec: { ports: [{ port: 1 }] } },
        }),
      );
    });

    it("is allowed exactly its verbs, as the API server's access review says", async () => {
      const reviews = cluster.kube.makeApiClient(AuthorizationV1Api);
      const may = async (verb: string, resource: string, namespace?: string, subresource?: string) => {
        const review = await reviews.createSubjectAccessReview({
          body: {
            spec: {
              user: WORKER,
              groups: [
                'system:serviceaccounts',
                `system:serviceaccounts:${LLMGW_NAMESPACE}`,
                'system:authenticated',
              ],
              resourceAttributes: { verb, resource, namespace, subresource },
            },
          },
        });
        return review.status?.allowed === true;
      };
      for (const verb of ['get', 'list', 'watch']) assert.ok(await may(verb, 'nodes'), `nodes ${verb}`);
      for (const verb of ['create', 'delete', 'get', 'list', 'watch']) {
        assert.ok(await may(verb, 'pods', LLMGW_NAMESPACE), `pods ${verb} in ${LLMGW_NAMESPACE}`);
      }
      for (const verb of ['create', 'update', 'patch', 'delete'])
        assert.equal(await may(verb, 'nodes'), false, `nodes ${verb}`);
      for (const verb of ['create', 'delete', 'get', 'patch']) {
        assert.equal(await may(verb, 'pods', 'default'), false, `pods ${verb} in default`);
      }
      assert.equal(await may('update', 'pods', LLMGW_NAMESPACE), false, 'pods update');
      assert.equal(await may('create', 'pods', LLMGW_NAMESPACE, 'exec'), false, 'pods/exec');
      assert.equal(await may('get', 'secrets', LLMGW_NAMESPACE), false, 'secrets');
    });
  });
});
