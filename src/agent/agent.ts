import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { nodeTaskQueue } from '../domain/node-work.ts';
import type { Resources } from '../domain/resources.ts';
import { Repeating } from '../repeating.ts';
import { ControlPlane } from './control-plane.ts';
import type { EngineUser } from './engine-user.ts';
import { detectCapacity } from './gpus.ts';
import { createNodeActivities } from './node-activities.ts';
import { NodeEngines } from './node-engines.ts';

export interface AgentOptions {
  node: string;
  apiUrl: string;
  token: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** --capacity: what it declares instead of what it detects. */
  capacity: Resources;
  gpuModel?: string;
  labels: Record<string, string>;
  /** LLMGW_AGENT_HOME: its engines' state and logs. */
  home: string;
  /** How often it heartbeats: well within the control plane's LLMGW_NODE_LOST_S. */
  heartbeatMs: number;
  /** Whom its engines run as (--engine-user); undefined: its own user. */
  runAs?: EngineUser;
  /** Where the node's secrets are (LLMGW_AGENT_SECRETS_DIR), for runtimes' secret_env. */
  secretsDir?: string;
  /** How often it scrapes its engines' load (issue 12: every second). */
  scrapeMs?: number;
  log?: Pick<Console, 'info' | 'warn'>;
}

export interface RunningAgent {
  stop(): Promise<void>;
  done: Promise<void>;
}

/**
 * One node's agent: registers the node with what it detects, adopts the engines still serving from
 * before a restart, runs the engine activities on the node's task queue, heartbeats (and stops any
 * engine whose replica the store no longer wants), and reports its engines' load and exits. Stopping it
 * stops none of its engines: a restarted agent adopts them.
 */
export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const log = options.log ?? console;
  const control = new ControlPlane(options.apiUrl, options.token, options.node);
  const detected = await detectCapacity(options.capacity);
  const { address } = await control.register({
    capacity: detected.capacity,
    ...((options.gpuModel ?? detected.gpuModel) && { gpu_model: options.gpuModel ?? detected.gpuModel }),
    labels: options.labels,
  });
  const engines = new NodeEngines({
    gpuIndices: detected.gpuIndices,
    home: options.home,
    runAs: options.runAs,
    secretsDir: options.secretsDir,
    // The node's address, from its token: where the gateway reaches the engines (their endpoints are built on it).
    host: address,
    onExit: (exit) => {
      log.warn(`replica ${exit.replica}: ${exit.reason}`);
      control.reportFailed(exit.replica, exit.reason).catch((error) => log.warn(String(error)));
    },
  });
  const adopted = await engines.adopt();
  log.info(
    `agent of node ${options.node}: registered; adopted ${adopted.adopted.length} engine(s) still serving`,
  );

  let connection: NativeConnection | undefined;
  let credential: string | undefined;
  /**
   * Stops the engines of replicas the store no longer wants (replaced while this agent was away), and
   * renews the node's Temporal credential before the one in use expires.
   */
  const beat = async () => {
    const asked = Date.now();
    const { wanted, back, temporal } = await control.heartbeat();
    if (temporal && temporal.credential !== credential) {
      credential = temporal.credential;
      await connection?.setApiKey(credential);
    }
    if (back) log.info(`agent of node ${options.node}: the node is back`);
    const keep = new Set(wanted.map((replica) => replica.id));
    for (const record of engines.supervisor.list()) {
      // An engine started since the question was sent may be wanted by a store that had not said so yet.
      if (keep.has(record.replica) || Date.parse(record.started_at) >= asked) continue;
      log.info(`replica ${record.replica} is no longer wanted on ${options.node}: stopping its engine`);
      await engines.stop(record.replica);
    }
  };
  await beat();

  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
    runtimeInstalled = true;
  }
  // Only its node's task queue: the credential reaches nothing else (deploy/temporal-server).
  connection = await NativeConnection.connect({
    address: options.temporalAddress,
    ...(credential && { apiKey: credential, tls: false }),
  });
  const worker = await Worker.create({
    connection,
    namespace: options.temporalNamespace,
    taskQueue: nodeTaskQueue(options.node),
    activities: createNodeActivities(engines),
  });
  const done = worker.run();

  const scrape = async () => {
    for (const [replica, load] of await engines.loads()) {
      if (!(load instanceof Error)) await control.reportLoad(replica, load);
    }
  };
  const failed = (error: unknown) => log.warn(String(error));
  const loops = [
    new Repeating(beat, options.heartbeatMs, failed),
    new Repeating(scrape, options.scrapeMs ?? 1000, failed),
  ];
  for (const loop of loops) loop.start();
  let stopping: Promise<void> | null = null;
  return {
    done,
    stop: () => {
      stopping ??= (async () => {
        for (const loop of loops) await loop.stop();
        worker.shutdown();
        await done.catch(() => {});
        await connection?.close();
        engines.close();
      })();
      return stopping;
    },
  };
}

let runtimeInstalled = false;
