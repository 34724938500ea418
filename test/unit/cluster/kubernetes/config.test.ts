import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../../../src/config.ts';

describe('the Kubernetes settings', () => {
  it('are none without LLMGW_KUBERNETES', () => {
    assert.equal(readConfig({}).kubernetes, null);
  });

  it('have their defaults, and images over the defaults', () => {
    const config = readConfig({
      LLMGW_KUBERNETES: 'in-cluster',
      LLMGW_KUBERNETES_IMAGES: 'vllm=registry/vllm:1, sim=x',
    });
    assert.equal(config.kubernetes?.namespace, 'llmgw');
    assert.equal(config.kubernetes?.gpuLabel, 'nvidia.com/gpu.product');
    assert.equal(config.kubernetes?.images.vllm, 'registry/vllm:1');
    assert.equal(config.kubernetes?.images.sim, 'x');
    assert.equal(config.kubernetes?.images['llama.cpp'], 'ghcr.io/ggml-org/llama.cpp:server');
    assert.equal(config.kubernetes?.scrapeMs, 1000);
    assert.equal(
      readConfig({ LLMGW_KUBERNETES: 'in-cluster', LLMGW_KUBERNETES_SCRAPE_MS: '250' }).kubernetes?.scrapeMs,
      250,
    );
  });

  it('refuse a namespace Kubernetes would, and images that are no pairs, in one sentence', () => {
    assert.throws(
      () => readConfig({ LLMGW_KUBERNETES: 'in-cluster', LLMGW_KUBERNETES_NAMESPACE: 'Not_A_Namespace' }),
      (error) => error instanceof ConfigError && /is no Kubernetes namespace name/.test(error.message),
    );
    assert.throws(
      () => readConfig({ LLMGW_KUBERNETES: 'in-cluster', LLMGW_KUBERNETES_IMAGES: 'vllm' }),
      (error) => error instanceof ConfigError && /kind=image pairs/.test(error.message),
    );
    assert.throws(
      () => readConfig({ LLMGW_KUBERNETES: 'in-cluster', LLMGW_KUBERNETES_SCRAPE_MS: '5' }),
      (error) => error instanceof ConfigError && /LLMGW_KUBERNETES_SCRAPE_MS/.test(error.message),
    );
  });
});
