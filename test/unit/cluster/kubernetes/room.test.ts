import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { nodesInStep, parseQuantity, podRequests } from '../../../../src/cluster/kubernetes/room.ts';

const node = (name: string, gpus: number, extra: Partial<V1Node> = {}): V1Node => ({
  metadata: { name, labels: { 'nvidia.com/gpu.product': 'H100' } },
  status: {
    allocatable: { 'nvidia.com/gpu': String(gpus), cpu: '64', memory: '512Gi' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
  ...extra,
});

const pod = (
  nodeName: string,
  gpus: number,
  labels: Record<string, string> = {},
  phase = 'Running',
): V1Pod => ({
  metadata: { name: `p-${Math.random()}`, namespace: 'ml', labels },
  spec: {
    nodeName,
    containers: [{ name: 'c', resources: { requests: { 'nvidia.com/gpu': String(gpus), cpu: '500m' } } }],
  },
  status: { phase },
});

describe('Kubernetes nodes as llmgw keeps them', () => {
  it('takes allocatable GPUs, cores and memory, and the GPU model from the configured label', () => {
    const [kept] = nodesInStep([node('a', 8)], [], 'nvidia.com/gpu.product', new Date());
    assert.deepEqual(kept.capacity, { gpus: 8, cores: 64, memory_gib: 512 });
    assert.equal(kept.gpu_model, 'H100');
    assert.equal(kept.ready, true);
    assert.equal(kept.cordoned, false);
    assert.equal(nodesInStep([node('a', 8)], [], 'other/label', new Date())[0].gpu_model, null);
  });

  it("subtracts what others' pods request there, not llmgw's own nor ended ones", () => {
    const pods = [
      pod('a', 3),
      pod('a', 2, { 'app.kubernetes.io/managed-by': 'llmgw' }),
      pod('a', 4, {}, 'Succeeded'),
      pod('b', 1),
    ];
    const [a] = nodesInStep([node('a', 8)], pods, 'nvidia.com/gpu.product', new Date());
    assert.deepEqual(a.capacity, { gpus: 5, cores: 63.5, memory_gib: 512 });
  });

  it('is cordoned while unschedulable, and not ready since its Ready condition changed', () => {
    const since = '2026-01-01T00:00:00Z';
    const [kept] = nodesInStep(
      [
        node('a', 8, {
          spec: { unschedulable: true },
          status: {
            allocatable: { 'nvidia.com/gpu': '8' },
            conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: new Date(since) }],
          },
        }),
      ],
      [],
      'x',
      new Date(),
    );
    assert.equal(kept.cordoned, true);
    assert.equal(kept.ready, false);
    assert.equal(kept.readyAt?.toISOString(), new Date(since).toISOString());
  });

  it('never counts a node below nothing, whatever its pods request', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 16 }), fc.array(fc.integer({ min: 0, max: 8 })), (gpus, asks) => {
        const [kept] = nodesInStep(
          [node('a', gpus)],
          asks.map((ask) => pod('a', ask)),
          'x',
          new Date(),
        );
        const held = asks.reduce((sum, ask) => sum + ask, 0);
        assert.equal(kept.capacity.gpus, Math.max(0, gpus - held));
      }),
    );
  });

  it('counts a pod as kube-scheduler does: containers summed, the largest init container, overhead', () => {
    const requests = podRequests({
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '1' } } },
          { name: 'b', resources: { requests: { cpu: '250m' } } },
        ],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '2', 'nvidia.com/gpu': '1' } } }],
        overhead: { cpu: '100m' },
      },
    });
    assert.deepEqual(requests, { cores: 2.1, gpus: 1 });
  });
});

describe('Kubernetes quantities', () => {
  it('reads the suffixes Kubernetes writes', () => {
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('64Gi'), 64 * 2 ** 30);
    assert.equal(parseQuantity('1k'), 1000);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('8'), 8);
    assert.equal(parseQuantity('1.5Mi'), 1.5 * 2 ** 20);
    assert.throws(() => parseQuantity('eight'), /no Kubernetes quantity/);
  });

  it('reads back the millicores and MiB llmgw writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (milli) => {
        assert.equal(parseQuantity(`${milli}m`), milli / 1000);
        assert.equal(parseQuantity(`${milli}Mi`), milli * 2 ** 20);
      }),
    );
  });
});
