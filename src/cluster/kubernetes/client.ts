import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import type { KubernetesConfig } from '../../domain/kubernetes-config.ts';
import type { Watcher } from './informer.ts';

/** The client configuration: the kubeconfig file's current context, or the pod's ServiceAccount. */
function loadKubeConfig(config: Pick<KubernetesConfig, 'kubeconfig'>): KubeConfig {
  const kube = new KubeConfig();
  if (config.kubeconfig === 'in-cluster') kube.loadFromCluster();
  else kube.loadFromFile(config.kubeconfig);
  return kube;
}

/** The API the driver uses (pods and nodes) and the watcher its informers use, from one configuration. */
export function kubernetesClients(config: Pick<KubernetesConfig, 'kubeconfig'>): {
  api: CoreV1Api;
  watcher: Watcher;
} {
  const kube = loadKubeConfig(config);
  return { api: kube.makeApiClient(CoreV1Api), watcher: new Watch(kube) };
}
