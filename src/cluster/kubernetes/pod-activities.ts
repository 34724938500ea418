import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { PodActivities, ReplicaOnKubernetesInput } from '../../domain/kubernetes-work.ts';
import { ENGINE_PORT, type PodOptions, podFor, podName } from './pod.ts';
import type { PodWatch } from './pod-watch.ts';

/** How often a start or a deletion under way heartbeats. */
const HEARTBEAT_EVERY_MS = 5000;
/** The longest a wait goes without looking at its pod, should the watch miss a change. */
const LOOK_AT_LEAST_EVERY_MS = 2000;

/**
 * The activities that run replicas as pods, on the control plane's own task queue (any worker: they
 * keep nothing in memory). startPod creates the replica's pod, or finds it created (its name is the
 * replica's: a retried start creates nothing twice), and waits until it is Ready; deletePod deletes it
 * with the given grace and waits until it is gone. Both heartbeat, as an agent's start does.
 */
export function podActivities(api: CoreV1Api, watch: PodWatch, options: PodOptions): PodActivities {
  const { namespace } = options;
  const readPod = async (name: string): Promise<V1Pod | null> => {
    try {
      return await api.readNamespacedPod({ name, namespace });
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw error;
    }
  };
  return {
    async startPod(input: ReplicaOnKubernetesInput): Promise<{ address: string; port: number }> {
      const made = podFor(
        {
          id: input.run.replica,
          model: input.run.model,
          node: input.node,
          resources: input.run.profile.resources,
        },
        input.run,
        input.owner,
        options,
      );
      if (!made.ok) throw ApplicationFailure.nonRetryable(made.why, 'PodRefused');
      const name = podName(input.run.replica);
      try {
        await api.createNamespacedPod({ namespace, body: made.pod });
      } catch (error) {
        // Created by an earlier try of this start: that pod is this replica's (adopted, not doubled).
        if (statusOf(error) !== 409) throw refusal(error, 'the API server refused the pod');
      }
      const deadline = Date.now() + input.startTimeoutS * 1000;
      return await whileBeating(async () => {
        for (;;) {
          // The watch's copy, or the API server's word while the watch has not seen the pod (yet).
          const pod = (await watch.get(name)) ?? (await readPod(name));
          if (!pod) throw ApplicationFailure.nonRetryable(`pod ${name} was deleted as it started`, 'PodGone');
          const outcome = podOutcome(pod);
          if (outcome.state === 'ready') return { address: outcome.address, port: ENGINE_PORT };
          if (outcome.state === 'refused') throw ApplicationFailure.nonRetryable(outcome.why, 'PodRefused');
          if (Date.now() > deadline) {
            throw ApplicationFailure.nonRetryable(
              `pod ${name} was not Ready within ${input.startTimeoutS} s (${outcome.why})`,
              'PodRefused',
            );
          }
          await watch.changed(LOOK_AT_LEAST_EVERY_MS);
        }
      });
    },

    async deletePod(input: { replica: string; graceS: number }): Promise<void> {
      const name = podName(input.replica);
      try {
        await api.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: Math.ceil(input.graceS) });
      } catch (error) {
        if (statusOf(error) === 404) return;
        throw error;
      }
      await whileBeating(async () => {
        while ((await watch.get(name)) ?? (await readPod(name))) await watch.changed(LOOK_AT_LEAST_EVERY_MS);
      });
    },
  };
}

/**
 * What a pod says of its start: Ready with its IP; refused, with kube-scheduler's or the kubelet's
 * sentence (Unschedulable: it does not fit the node llmgw chose; ended; an image that cannot be pulled);
 * else still starting, with what it waits on.
 */
export function podOutcome(
  pod: V1Pod,
):
  | { state: 'ready'; address: string }
  | { state: 'refused'; why: string }
  | { state: 'starting'; why: string } {
  const name = pod.metadata?.name ?? '?';
  const conditions = pod.status?.conditions ?? [];
  const scheduled = conditions.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return {
      state: 'refused',
      why: `kube-scheduler could not place pod ${name} on node ${nodeOf(pod)}: ${scheduled.message ?? 'Unschedulable'}`,
    };
  }
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') {
    return {
      state: 'refused',
      why: `pod ${name} ended (${phase}) before it was Ready: ${pod.status?.message ?? pod.status?.reason ?? 'no reason given'}`,
    };
  }
  for (const status of pod.status?.containerStatuses ?? []) {
    const waiting = status.state?.waiting;
    if (waiting && BAD_WAITS.has(waiting.reason ?? '')) {
      return {
        state: 'refused',
        why: `pod ${name}'s container cannot start: ${waiting.reason}: ${waiting.message ?? ''}`.trim(),
      };
    }
  }
  const ready = conditions.find((condition) => condition.type === 'Ready');
  if (ready?.status === 'True' && pod.status?.podIP) return { state: 'ready', address: pod.status.podIP };
  return {
    state: 'starting',
    why: scheduled?.status === 'True' ? `${phase ?? 'Pending'}, not Ready` : 'not scheduled yet',
  };
}

/** Container waits that do not end by waiting longer. */
const BAD_WAITS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CrashLoopBackOff',
]);

function nodeOf(pod: V1Pod): string {
  const term =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms?.[0];
  return term?.matchFields?.[0]?.values?.[0] ?? '?';
}

async function whileBeating<T>(work: () => Promise<T>): Promise<T> {
  const beat = setInterval(() => Context.current().heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

/** The HTTP status of a client-node error (its ApiException's code), if any. */
export function statusOf(error: unknown): number | undefined {
  const value = error as { code?: number; statusCode?: number } | null;
  return value?.code ?? value?.statusCode;
}

/** A 4xx from the API server is its answer (tried again, it says the same); anything else may pass. */
function refusal(error: unknown, what: string): unknown {
  const status = statusOf(error);
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    const body = (error as { body?: unknown }).body;
    const message = typeof body === 'string' ? body : JSON.stringify(body);
    return ApplicationFailure.nonRetryable(`${what} (${status}): ${message}`, 'PodRefused');
  }
  return error;
}
