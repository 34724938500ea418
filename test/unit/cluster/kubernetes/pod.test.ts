import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { engineCommand } from '../../../../src/agent/engine-command.ts';
import { labelValue, PAUSE_IMAGE, podFor } from '../../../../src/cluster/kubernetes/pod.ts';
import { podOutcome } from '../../../../src/cluster/kubernetes/pod-activities.ts';

const options = {
  namespace: 'llmgw',
  images: { vllm: 'vllm/vllm-openai:v0' },
  drainGraceS: 30,
  engineCommand,
};
const replica = {
  id: 'abc',
  model: 'acme/llama 3',
  node: 'gpu-1',
  resources: { gpus: 2, cores: 8, memory_gib: 64 },
};

describe("a replica's pod", () => {
  it('asks for what the profile reserved, as requests and limits, on the node llmgw chose', () => {
    const made = podFor(
      replica,
      {
        replica: 'abc',
        model: replica.model,
        profile: { name: 'p', resources: replica.resources, engine: { kind: 'vllm', model: 'meta/llama' } },
      },
      'team:ml',
      options,
    );
    assert.ok(made.ok);
    const spec = made.pod.spec!;
    const container = spec.containers[0];
    assert.deepEqual(container.resources?.requests, {
      'nvidia.com/gpu': '2',
      cpu: '8000m',
      memory: '65536Mi',
    });
    assert.deepEqual(container.resources?.limits, container.resources?.requests);
    assert.deepEqual(
      spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
      [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['gpu-1'] }] }],
    );
    assert.equal(made.pod.metadata?.name, 'llmgw-abc');
    assert.equal(made.pod.metadata?.labels?.['llmgw.dev/model'], 'acme_llama_3');
    assert.equal(made.pod.metadata?.annotations?.['llmgw.dev/model'], 'acme/llama 3');
    assert.equal(made.pod.metadata?.labels?.['llmgw.dev/owner'], 'team_ml');
    assert.equal(container.image, 'vllm/vllm-openai:v0');
    assert.deepEqual(container.args?.slice(0, 6), [
      'serve',
      'meta/llama',
      '--host',
      '0.0.0.0',
      '--port',
      '8000',
    ]);
    assert.equal(container.readinessProbe?.httpGet?.path, '/health');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.ok(!container.env?.some((variable) => variable.name === 'CUDA_VISIBLE_DEVICES'));
  });

  it('has a whole number of seconds of grace, which the API server requires (0.2 s of drain grace: 1)', () => {
    const made = podFor(
      replica,
      { replica: 'abc', model: 'm', profile: { name: 'p', resources: {} } },
      null,
      {
        ...options,
        drainGraceS: 0.2,
      },
    );
    assert.ok(made.ok);
    assert.equal(made.pod.spec?.terminationGracePeriodSeconds, 1);
  });

  it('holds its room with a pause container when its profile runs no engine', () => {
    const made = podFor(
      replica,
      { replica: 'abc', model: 'm', profile: { name: 'p', resources: {} } },
      null,
      options,
    );
    assert.ok(made.ok);
    assert.equal(made.pod.spec?.containers[0].image, PAUSE_IMAGE);
  });

  it('is refused, saying why, for an engine kind with no image', () => {
    const made = podFor(
      replica,
      {
        replica: 'abc',
        model: 'm',
        profile: { name: 'p', resources: {}, engine: { kind: 'sglang', model: 'x' } },
      },
      null,
      options,
    );
    assert.deepEqual(made, {
      ok: false,
      why: 'no image is set for engine kind sglang (LLMGW_KUBERNETES_IMAGES names the image of each kind)',
    });
  });

  it('has label values Kubernetes accepts, whatever the names', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (name) => {
        assert.match(labelValue(name), /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/);
        assert.ok(labelValue(name).length <= 63);
      }),
    );
  });
});

describe('what a pod says of its start', () => {
  it("is refused with kube-scheduler's sentence when it does not fit", () => {
    const outcome = podOutcome({
      metadata: { name: 'llmgw-abc' },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available: 1 Insufficient nvidia.com/gpu.',
          },
        ],
      },
    });
    assert.equal(outcome.state, 'refused');
    assert.match((outcome as { why: string }).why, /Insufficient nvidia.com\/gpu/);
  });

  it('is ready with its IP once its Ready condition is True', () => {
    assert.deepEqual(
      podOutcome({
        status: { phase: 'Running', podIP: '10.244.0.7', conditions: [{ type: 'Ready', status: 'True' }] },
      }),
      { state: 'ready', address: '10.244.0.7' },
    );
  });
});
