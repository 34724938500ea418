import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { childEnvironment } from '../child-process.ts';
import { DEFAULT_START_TIMEOUT_S, type EngineSpec } from '../contracts/schemas/engine.ts';
import { hostUrl } from '../domain/node-grant.ts';
import { ENGINE_VARIABLES, engineCommand } from './engine-command.ts';
import { tailLines } from './engine-log.ts';
import { type EngineRecord, EngineStateFile } from './engine-state.ts';
import type { EngineUser } from './engine-user.ts';
import { answersReady, waitUntilReady } from './readiness.ts';

/** The agent's own folder: the engines' state file and their logs. */
export const agentHome = (env: NodeJS.ProcessEnv = process.env) =>
  env.LLMGW_AGENT_HOME || join(homedir(), '.llmgw-agent');

/** Lines of an engine's log a failure carries: enough to see why, short enough for a replica's reason. */
const EXIT_LINES = 10;

/** How long after SIGTERM an engine's group gets SIGKILL (issue 12: "then SIGKILL after 10 s"). */
const STOP_GRACE_MS = 10_000;

/** How often the agent looks whether an engine it adopted (not its child: no exit event) still runs. */
const ADOPTED_WATCH_MS = 1000;

export interface ReplicaStart {
  replica: string;
  /** The llmgw model's name, which the engine serves under. */
  model: string;
  engine: EngineSpec;
  /** Its own GPU indices, from GpuAllocator. */
  gpus: readonly number[];
  defaultConcurrency?: number;
  /** A runtime's fixed variables, its parameters filled in. */
  env?: Record<string, string>;
  /** Variable -> the name of a secret this node keeps (a file of the secrets folder); read at each start. */
  secretEnv?: Record<string, string>;
}

/** An engine that ended without being asked to: what it said last, for the replica's reason. */
export interface EngineExit {
  replica: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  lastLines: string[];
  /** One sentence and the log's last lines, e.g. "the engine exited with code 1; its log ends: ...". */
  reason: string;
}

export interface SupervisorOptions {
  home?: string;
  /** The node's address, which its engines listen on (default 127.0.0.1). */
  host?: string;
  /** Told of every engine that exits, or is found gone, without a stop asked for. */
  onExit?: (exit: EngineExit) => void;
  /** Where the engines' basic variables (PATH, HOME, ...) come from; default this process's. */
  env?: NodeJS.ProcessEnv;
  stopGraceMs?: number;
  /** Whom the engines run as (--engine-user); undefined: the agent's own user. */
  runAs?: EngineUser;
  /** Where the node's secrets are, one file each (LLMGW_AGENT_SECRETS_DIR); default <home>/secrets. */
  secretsDir?: string;
}

/** Replica IDs name log files: nothing that could climb out of the logs folder. */
const REPLICA_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Runs replicas' engines as processes on this node. Each engine leads a process group of its own
 * (so that a stop reaches the workers it forks), writes its stdout and stderr to logs/<replica>.log
 * under the agent's home, and is kept in engines.json there, so that an agent that restarts adopts the
 * engines still serving instead of starting them twice. Engines outlive the agent: stopping the agent
 * stops none of them.
 */
export class Supervisor {
  readonly home: string;
  private readonly state: EngineStateFile;
  /** Engines asked to stop: their exit is no failure. */
  private readonly stopping = new Set<string>();
  /** The engines watched: a child by its exit event (null here), an adopted engine by a timer. */
  private readonly watchers = new Map<string, NodeJS.Timeout | null>();
  private closed = false;
  /** Starts under way, so that a second start of one replica waits for the first instead of racing it. */
  private readonly starts = new Map<string, Promise<EngineRecord>>();

  constructor(private readonly options: SupervisorOptions = {}) {
    this.home = options.home ?? agentHome();
    this.state = new EngineStateFile(join(this.home, 'engines.json'));
  }

  logPath(replica: string): string {
    if (!REPLICA_ID.test(replica)) throw new Error(`"${replica}" cannot be a replica ID`);
    return join(this.home, 'logs', `${replica}.log`);
  }

  /** The engines this node runs, as engines.json has them. */
  list(): EngineRecord[] {
    return this.state.read();
  }

  /**
   * Starts the replica's engine on a free port and resolves once it answers ready, with its record.
   * A replica already running resolves with the engine it has (a retried start starts no second one).
   * An engine that exits first, or is not ready within its start timeout (then it is stopped), rejects
   * with the reason and the end of its log.
   */
  start(request: ReplicaStart): Promise<EngineRecord> {
    const inFlight = this.starts.get(request.replica) ?? this.launch(request);
    this.starts.set(request.replica, inFlight);
    const done = () => this.starts.delete(request.replica);
    inFlight.then(done, done);
    return inFlight;
  }

  private async launch(request: ReplicaStart): Promise<EngineRecord> {
    const known = this.list().find((r) => r.replica === request.replica);
    if (known && this.watchers.has(known.replica)) return known;
    // Known but not watched: an engine adopt() found silent. It is not trusted to become ready; a new one is.
    if (known) await this.stop(known.replica);
    const log = this.logPath(request.replica);
    const host = this.options.host ?? '127.0.0.1';
    const port = await freePort(host);
    const command = engineCommand(request.engine, { ...request, port, host });
    const secrets = this.readSecrets(request.secretEnv ?? {});
    const runAs = this.options.runAs;
    // Another user's engine gets its own home, and starts where it may read (the agent's folder may be closed to it).
    const user = runAs && { HOME: runAs.home, USER: runAs.name, LOGNAME: runAs.name };
    mkdirSync(join(this.home, 'logs'), { recursive: true });
    const fd = openSync(log, 'a');
    let child: ChildProcess;
    try {
      writeSync(
        fd,
        `--- llmgw agent starts ${request.replica} at ${new Date().toISOString()}: ${command.command} ${command.args.join(' ')}\n`,
      );
      child = spawn(command.command, command.args, {
        detached: true,
        stdio: ['ignore', fd, fd],
        env: childEnvironment(
          { passes: ENGINE_VARIABLES, set: { ...request.env, ...secrets, ...user, ...command.env } },
          this.options.env,
        ),
        ...(runAs && { uid: runAs.uid, gid: runAs.gid, cwd: '/' }),
      });
    } finally {
      closeSync(fd);
    }
    // The agent's own exit does not wait for its engines: they serve on without it.
    child.unref();
    // Whether a stop was asked for is read when the engine ends, before its log is: stop() may be over by then.
    const exited = new Promise<{ exit: EngineExit; asked: boolean }>((resolve) => {
      const end = (code: number | null, signal: NodeJS.Signals | null, how?: string) => {
        const asked = this.stopping.has(request.replica);
        this.ended(request.replica, code, signal, how).then((exit) => resolve({ exit, asked }));
      };
      child.once('error', (error) => end(null, null, `could not run ${command.command}: ${error.message}`));
      child.once('exit', (code, signal) => end(code, signal));
    });
    if (child.pid === undefined) throw new Error((await exited).exit.reason);
    const record: EngineRecord = {
      replica: request.replica,
      model: request.model,
      engine: request.engine,
      pid: child.pid,
      port,
      url: hostUrl(host, port),
      gpus: [...request.gpus],
      log,
      started_at: new Date().toISOString(),
    };
    this.state.put(record);
    this.watchers.set(request.replica, null);
    let starting = true;
    exited.then(({ exit, asked }) => {
      if (this.closed) return;
      this.forget(record, !asked);
      if (!asked && !starting) this.options.onExit?.(exit);
    });
    const timeoutS = request.engine.start_timeout_s ?? DEFAULT_START_TIMEOUT_S;
    const ready = await waitUntilReady(record.url, timeoutS * 1000, exited);
    starting = false;
    if (ready) return record;
    const exitedFirst = await Promise.race([exited, Promise.resolve(null)]);
    if (exitedFirst?.asked) throw new Error(`replica ${request.replica} was stopped while it started`);
    if (exitedFirst) throw new Error(exitedFirst.exit.reason);
    await this.stop(request.replica);
    throw new Error(
      `the engine was not ready within ${timeoutS} s, so it was stopped${logEnd(await tailLines(log, EXIT_LINES))}`,
    );
  }

  /** Each secret's value, read from its file now: a secret changed on the node reaches the next start. */
  private readSecrets(secretEnv: Record<string, string>): Record<string, string> {
    const folder = this.options.secretsDir ?? join(this.home, 'secrets');
    return Object.fromEntries(
      Object.entries(secretEnv).map(([variable, secret]) => {
        try {
          return [variable, readFileSync(join(folder, secret), 'utf8').trimEnd()];
        } catch {
          throw new Error(
            `the secret "${secret}" (for ${variable}) is not on this node: put it in ${join(folder, secret)}`,
          );
        }
      }),
    );
  }

  /**
   * SIGTERM to the engine's process group, SIGKILL to it after the grace period; resolves once no
   * process of the group is left. Stopping a replica that runs nothing does nothing.
   */
  async stop(replica: string): Promise<void> {
    const record = this.list().find((r) => r.replica === replica);
    if (!record) return;
    this.stopping.add(replica);
    try {
      signalGroup(record.pid, 'SIGTERM');
      if (!(await groupGone(record.pid, this.options.stopGraceMs ?? STOP_GRACE_MS))) {
        signalGroup(record.pid, 'SIGKILL');
        await groupGone(record.pid, 5000);
      }
      this.forget(record, false);
    } finally {
      this.stopping.delete(replica);
    }
  }

  /** The last `count` lines of the replica's log (it is kept after the engine ends). */
  tail(replica: string, count: number): Promise<string[]> {
    return tailLines(this.logPath(replica), count);
  }

  /**
   * After the agent restarts: each engine of engines.json whose process still runs and whose port
   * answers ready is adopted (watched from now on, its exit reported like a child's); one whose process
   * is gone is dropped from the file. One whose process runs but does not answer is kept, neither
   * adopted nor dropped: the caller decides (stop it, or try again once it has started).
   */
  async adopt(): Promise<{ adopted: EngineRecord[]; gone: EngineRecord[]; silent: EngineRecord[] }> {
    const found = { adopted: [] as EngineRecord[], gone: [] as EngineRecord[], silent: [] as EngineRecord[] };
    for (const record of this.list()) {
      if (this.watchers.has(record.replica)) continue;
      if (!engineRuns(record.pid)) {
        // Workers its leader left behind would hold its GPUs: they go with it.
        this.forget(record, true);
        found.gone.push(record);
      } else if (await answersReady(record.url)) {
        this.watchAdopted(record);
        found.adopted.push(record);
      } else {
        found.silent.push(record);
      }
    }
    return found;
  }

  /** Stops watching every engine (the agent is stopping); the engines keep serving, and engines.json keeps them. */
  close() {
    this.closed = true;
    for (const timer of this.watchers.values()) if (timer) clearInterval(timer);
    this.watchers.clear();
  }

  private watchAdopted(record: EngineRecord) {
    const timer = setInterval(async () => {
      if (engineRuns(record.pid) || this.stopping.has(record.replica)) return;
      clearInterval(timer);
      const exit = await this.ended(
        record.replica,
        null,
        null,
        `the engine (pid ${record.pid}) ended while it was adopted`,
      );
      this.forget(record, true);
      this.options.onExit?.(exit);
    }, ADOPTED_WATCH_MS);
    timer.unref();
    this.watchers.set(record.replica, timer);
  }

  private async ended(
    replica: string,
    code: number | null,
    signal: NodeJS.Signals | null,
    how = signal ? `the engine was killed by ${signal}` : `the engine exited with code ${code}`,
  ): Promise<EngineExit> {
    const lastLines = await tailLines(this.logPath(replica), EXIT_LINES);
    return { replica, code, signal, lastLines, reason: `${how}${logEnd(lastLines)}` };
  }

  /** Drops an engine that ended; after a failure, kills what is left of its group (its forked workers hold GPUs). */
  private forget(record: EngineRecord, failed: boolean) {
    if (failed) signalGroup(record.pid, 'SIGKILL');
    clearInterval(this.watchers.get(record.replica) ?? undefined);
    this.watchers.delete(record.replica);
    if (this.list().some((r) => r.replica === record.replica && r.pid === record.pid)) {
      this.state.remove(record.replica);
    }
  }
}

const logEnd = (lines: string[]) => (lines.length > 0 ? `; its log ends:\n${lines.join('\n')}` : '');

/**
 * A port nothing listens on now, for the engine to take. Another process may take it in between;
 * the engine then fails to bind and its exit says so, and a retried start picks another port.
 */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function signalGroup(pgid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Whether an engine's leading process still runs, and still leads its group: a pid the system gave
 * to another process since leads no group of that ID.
 */
function engineRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return groupAlive(pid);
}

/** Whether any process of the group is left (signal 0 checks without sending). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function groupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
