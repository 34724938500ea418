import type { V1Pod } from '@kubernetes/client-node';
import type { EngineSpec } from '../../contracts/schemas/engine.ts';
import type { Replica } from '../../domain/cluster.ts';
import { LOAD_GAUGES, loadGaugesOf } from '../../domain/engine-metrics.ts';
import type { ReplicaToRun } from '../../domain/node-work.ts';
import type { Resources } from '../../domain/resources.ts';
import { resolveRuntime } from '../../domain/runtime-params.ts';

/** The labels every pod llmgw runs carries: how a restart finds its pods (adopts or deletes them). */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'llmgw' } as const;
export const MANAGED_SELECTOR = 'app.kubernetes.io/managed-by=llmgw';
export const REPLICA_LABEL = 'llmgw.dev/replica';
export const MODEL_LABEL = 'llmgw.dev/model';
export const OWNER_LABEL = 'llmgw.dev/owner';
/** Label values allow 63 characters of [A-Za-z0-9_.-]; the exact names are in these annotations. */
export const MODEL_ANNOTATION = 'llmgw.dev/model';
export const OWNER_ANNOTATION = 'llmgw.dev/owner';
/** Whose gauges the engine's /metrics holds (a key of LOAD_GAUGES): the lease's holder scrapes them. */
export const METRICS_ANNOTATION = 'llmgw.dev/metrics';

/** The port every engine listens on inside its pod: a pod has its own IP, so no two replicas share one. */
export const ENGINE_PORT = 8000;
/** The extended resource NVIDIA's device plugin advertises; kube-scheduler fits GPUs by it. */
export const GPU_RESOURCE = 'nvidia.com/gpu';

/** The one pod of a replica: its name is the replica's, so that a retried start creates nothing twice. */
export const podName = (replica: string) => `llmgw-${replica}`;

/** What the driver needs to know to run pods, beside the replica. */
export interface PodOptions {
  namespace: string;
  /** The image of each engine kind (vllm, sglang, llama.cpp, command, sim). */
  images: Record<string, string>;
  /** The drain grace: the pod's termination grace period. */
  drainGraceS: number;
  /**
   * The command line of an engine, as an agent runs it (src/agent/engine-command.ts, given by the
   * worker: the cluster layer does not reach into the agent's).
   */
  engineCommand: EngineCommandOf;
}

/** An engine's command line for a replica listening on `host`:`port`. */
export type EngineCommandOf = (
  engine: EngineSpec,
  launch: { replica: string; model: string; port: number; host: string; gpus: readonly number[] },
) => { command: string; args: string[]; env: Record<string, string> };

/** A label value from any text: characters it may not hold become '_', cut to 63, alphanumeric at both ends. */
export function labelValue(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+/, '').replace(/[^A-Za-z0-9]+$/, '');
}

/** A profile's resources as Kubernetes quantities: GPUs whole, cores in millicores, memory in MiB. */
export function quantities(resources: Resources): Record<string, string> {
  const out: Record<string, string> = {};
  if (resources.gpus) out[GPU_RESOURCE] = String(Math.ceil(resources.gpus));
  if (resources.cores) out.cpu = `${Math.round(resources.cores * 1000)}m`;
  if (resources.memory_gib) out.memory = `${Math.round(resources.memory_gib * 1024)}Mi`;
  return out;
}

/**
 * The pod of one replica, or a sentence saying why none can be made (a runtime refusing its
 * parameters, a kind with no image). Requests equal limits, so the pod is what the profile reserved and
 * no more (Guaranteed, when it asks for CPU and memory). Required node affinity to the node llmgw chose,
 * rather than nodeName: kube-scheduler still checks the fit, and says Unschedulable when it fails.
 */
export function podFor(
  replica: Pick<Replica, 'id' | 'model' | 'node' | 'resources'>,
  run: ReplicaToRun,
  owner: string | null,
  options: PodOptions,
): { ok: true; pod: V1Pod } | { ok: false; why: string } {
  const engine = engineOf(run);
  if (!engine.ok) return engine;
  const container = engine.spec ? engineContainer(replica, engine.spec, engine.env, options) : holder();
  if (!container.ok) return container;
  const resources = quantities(replica.resources);
  const metrics = engine.spec ? metricsOf(engine.spec as EngineSpec) : null;
  return {
    ok: true,
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: podName(replica.id),
        namespace: options.namespace,
        labels: {
          ...MANAGED_BY,
          [REPLICA_LABEL]: replica.id,
          [MODEL_LABEL]: labelValue(replica.model),
          ...(owner && { [OWNER_LABEL]: labelValue(owner) }),
        },
        annotations: {
          [MODEL_ANNOTATION]: replica.model,
          ...(owner && { [OWNER_ANNOTATION]: owner }),
          ...(metrics && { [METRICS_ANNOTATION]: metrics }),
        },
      },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: Math.ceil(options.drainGraceS),
        // The engine needs no Kubernetes API: no token mounted in it.
        automountServiceAccountToken: false,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: [replica.node] }] },
              ],
            },
          },
        },
        containers: [{ ...container.container, resources: { requests: resources, limits: resources } }],
      },
    },
  };
}

type Container = NonNullable<V1Pod['spec']>['containers'][number];

/**
 * The engine's container: its command as an agent would run it, listening on every address of its pod
 * (the pod's IP is its own), ready when its health path answers (vLLM, SGLang and llama.cpp serve
 * /health). It sees only the GPUs the device plugin gives it, so no CUDA_VISIBLE_DEVICES of ours.
 */
function engineContainer(
  replica: Pick<Replica, 'id' | 'model'>,
  spec: { kind: string } & Record<string, unknown>,
  runtimeEnv: Record<string, string>,
  options: PodOptions,
): { ok: true; container: Container } | { ok: false; why: string } {
  const image = options.images[spec.kind];
  if (!image) {
    return {
      ok: false,
      why: `no image is set for engine kind ${spec.kind} (LLMGW_KUBERNETES_IMAGES names the image of each kind)`,
    };
  }
  const launch = { replica: replica.id, model: replica.model, port: ENGINE_PORT, host: '0.0.0.0', gpus: [] };
  const command = options.engineCommand(spec as EngineSpec, launch);
  const { CUDA_VISIBLE_DEVICES: _gpus, ...env } = { ...command.env, ...runtimeEnv };
  return {
    ok: true,
    container: {
      name: 'engine',
      image,
      command: [command.command],
      args: command.args,
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
      ports: [{ name: 'http', containerPort: ENGINE_PORT }],
      readinessProbe: { httpGet: { path: '/health', port: 'http' }, periodSeconds: 5, failureThreshold: 3 },
    },
  };
}

/**
 * A replica of a profile without an engine serves nothing but holds its room (as on the simulated
 * cluster): a pause container, ready once it runs.
 */
const holder = (): { ok: true; container: Container } => ({
  ok: true,
  container: { name: 'engine', image: PAUSE_IMAGE },
});
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

/** The engine a replica runs: its runtime resolved with its parameters, or its profile's inline engine. */
function engineOf(
  run: ReplicaToRun,
):
  | { ok: true; spec?: { kind: string } & Record<string, unknown>; env: Record<string, string> }
  | { ok: false; why: string } {
  if (run.runtime) {
    const resolved = resolveRuntime(run.runtime.name, run.runtime, run.profile.params);
    if (!resolved.ok) return resolved;
    if (Object.keys(resolved.resolved.secretEnv).length > 0) {
      return {
        ok: false,
        why: `runtime ${run.runtime.name} reads secrets on its node (secret_env), which pods do not do yet`,
      };
    }
    return { ok: true, spec: resolved.resolved.engine, env: resolved.resolved.env };
  }
  return { ok: true, spec: run.profile.engine, env: {} };
}

/** The LOAD_GAUGES key of an engine's /metrics, or null when nobody scrapes it (loadGaugesOf says). */
function metricsOf(engine: EngineSpec): string | null {
  const gauges = loadGaugesOf(engine);
  return Object.entries(LOAD_GAUGES).find(([, named]) => named === gauges)?.[0] ?? null;
}
