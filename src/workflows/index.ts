// The workflow bundle's entry: every workflow type the worker registers.
export { reconcileModel } from './reconcile-model.ts';
export { replicaLogs } from './replica-logs.ts';
export { replicaOnKubernetes } from './replica-on-kubernetes.ts';
export { replicaOnNode } from './replica-on-node.ts';
