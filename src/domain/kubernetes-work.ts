// What the start or the drain of one replica on a Kubernetes node carries, as the workflow and the pod
// activities both name it. Types and names only, no I/O (the workflow bundle imports it).
import type { ReplicaToRun } from './node-work.ts';
import type { Resources } from './resources.ts';

export interface ReplicaOnKubernetesInput {
  op: 'start' | 'drain';
  node: string;
  run: ReplicaToRun;
  /** The model's owner scope (its pod's label), null for none. */
  owner: string | null;
  /** How long its pod may take to be Ready (the profile's start_timeout_s, or the default). */
  startTimeoutS: number;
  /** drain: the pod's termination grace period, in which its in-flight requests end. */
  graceS: number;
}

/** The activities that run replicas as pods (src/cluster/kubernetes/pod-activities.ts), on the control plane's task queue. */
export interface PodActivities {
  /** Creates the replica's pod (or finds it created) and resolves with its IP and port once it is Ready. */
  startPod(input: ReplicaOnKubernetesInput): Promise<{ address: string; port: number }>;
  /** Deletes the replica's pod with this grace period and resolves once it is gone; none is no error. */
  deletePod(input: { replica: string; graceS: number }): Promise<void>;
}

/** A Kubernetes node as llmgw keeps it. */
export interface NodeInStep {
  name: string;
  /** Allocatable, less what pods llmgw does not run request there. */
  capacity: Resources;
  gpu_model: string | null;
  labels: Record<string, string>;
  /** spec.unschedulable: cordoned (kubectl cordon), so llmgw places nothing new there either. */
  cordoned: boolean;
  /** Its Ready condition is True. */
  ready: boolean;
  /** When its Ready condition was last True: now while it is, else when it stopped being (null: never). */
  readyAt: Date | null;
}
