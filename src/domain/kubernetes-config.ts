// The Kubernetes settings of the environment (LLMGW_KUBERNETES...): read by src/config.ts, used by
// src/cluster/kubernetes. Pure: no I/O.

/** The default images by engine kind; LLMGW_KUBERNETES_IMAGES replaces any of them. */
export const DEFAULT_IMAGES: Record<string, string> = {
  vllm: 'vllm/vllm-openai:latest',
  sglang: 'lmsysorg/sglang:latest',
  'llama.cpp': 'ghcr.io/ggml-org/llama.cpp:server',
};

/** How a worker reaches a Kubernetes cluster and runs replicas there. */
export interface KubernetesConfig {
  /** A kubeconfig file, or `in-cluster`: the pod's own ServiceAccount (deploy/). */
  kubeconfig: string;
  /** The namespace llmgw's pods run in (the ServiceAccount may create and delete pods there only). */
  namespace: string;
  /** The node label that names its GPUs' model (NVIDIA's GPU feature discovery sets this one). */
  gpuLabel: string;
  /** The image of each engine kind. */
  images: Record<string, string>;
  /** How often the lease's holder scrapes the engines' /metrics at their pod IPs, in ms. */
  scrapeMs: number;
}

/**
 * The Kubernetes settings of the environment, or null when LLMGW_KUBERNETES is unset (no cluster):
 *   LLMGW_KUBERNETES            a kubeconfig file's path, or `in-cluster`
 *   LLMGW_KUBERNETES_NAMESPACE  where replicas' pods run (default: llmgw)
 *   LLMGW_KUBERNETES_GPU_LABEL  the node label of the GPU model (default: nvidia.com/gpu.product)
 *   LLMGW_KUBERNETES_IMAGES     kind=image pairs, comma-separated, over the defaults (vllm, sglang, llama.cpp)
 *   LLMGW_KUBERNETES_SCRAPE_MS  how often engines' /metrics are scraped at their pod IPs (default: 1000)
 * Throws a sentence on a malformed value.
 */
export function kubernetesConfig(env: NodeJS.ProcessEnv): KubernetesConfig | null {
  const kubeconfig = env.LLMGW_KUBERNETES?.trim();
  if (!kubeconfig) return null;
  const namespace = env.LLMGW_KUBERNETES_NAMESPACE?.trim() || 'llmgw';
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) {
    throw new Error(
      `LLMGW_KUBERNETES_NAMESPACE "${namespace}" is no Kubernetes namespace name (lowercase letters, digits and -)`,
    );
  }
  const images = { ...DEFAULT_IMAGES };
  for (const pair of (env.LLMGW_KUBERNETES_IMAGES ?? '').split(',').filter((part) => part.trim())) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1) {
      throw new Error(`LLMGW_KUBERNETES_IMAGES takes kind=image pairs separated by commas, not "${pair}"`);
    }
    images[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  const scrapeText = env.LLMGW_KUBERNETES_SCRAPE_MS?.trim() || '1000';
  const scrapeMs = Number(scrapeText);
  if (!Number.isInteger(scrapeMs) || scrapeMs < 100) {
    throw new Error(
      `LLMGW_KUBERNETES_SCRAPE_MS is a whole number of milliseconds, 100 or more, not "${scrapeText}"`,
    );
  }
  return {
    kubeconfig,
    scrapeMs,
    namespace,
    gpuLabel: env.LLMGW_KUBERNETES_GPU_LABEL?.trim() || 'nvidia.com/gpu.product',
    images,
  };
}
