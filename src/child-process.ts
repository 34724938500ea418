import { type ChildProcess, spawn } from 'node:child_process';

/** What any program needs to run: where programs, home and temporary files are; the locale and time zone. */
const BASICS = /^(PATH|HOME|USER|LOGNAME|TMPDIR|TEMP|TMP|TZ|LANG|LANGUAGE|LC_[A-Z]+|SYSTEMROOT|WINDIR)$/;

/**
 * The environment of a child process llmgw starts: the basics, the variables `passes` lets through
 * and `set`. Nothing else of llmgw's reaches it: not its tokens, not DATABASE_URL, not the user's
 * other secrets (a child may log its environment, or run as another user).
 */
export function childEnvironment(
  options: { passes?: RegExp; set?: Record<string, string> } = {},
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const kept = Object.entries(env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && (BASICS.test(entry[0]) || (options.passes?.test(entry[0]) ?? false)),
  );
  return { ...Object.fromEntries(kept), ...options.set };
}

/**
 * Variables whose values are secrets that config keeps (or the files that hold them): once it has read
 * them, they leave process.env. (The process's own /proc/<pid>/environ keeps what it started with:
 * give secrets as NAME_FILE to keep them out of it.)
 */
const SECRET_VARIABLES = ['LLMGW_ADMIN_TOKEN', 'LLMGW_METRICS_TOKEN', 'DATABASE_URL'].flatMap((name) => [
  name,
  `${name}_FILE`,
]);

/** Removes the secrets config has read from process.env: a child a library starts does not inherit them. */
export function forgetSecrets(env: NodeJS.ProcessEnv = process.env) {
  for (const name of SECRET_VARIABLES) delete env[name];
}

export interface Service {
  child: ChildProcess;
  /** The end of what it wrote (stdout and stderr), for error messages. */
  output(): string;
  /** `stopSignal`, then SIGKILL if it has not exited after 10 s. */
  stop(): Promise<void>;
}

/**
 * Runs a server program for as long as this process runs (Postgres, the Temporal dev server) with a
 * scrubbed environment: its output goes line by line to `log`, and it is sent `stopSignal` when this
 * process exits, whatever way it does.
 */
export function startService(
  command: string,
  args: string[],
  options: {
    stopSignal: NodeJS.Signals;
    log?: (line: string) => void;
    env?: Record<string, string>;
    uid?: number;
    gid?: number;
  },
): Service {
  const { stopSignal, log, env, ...runAs } = options;
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: env ?? childEnvironment(),
    ...runAs,
  });
  const stopOnExit = () => child.kill(stopSignal);
  process.once('exit', stopOnExit);
  child.once('exit', () => process.off('exit', stopOnExit));
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
    for (const line of chunk.toString().split('\n')) if (line.trim()) log?.(line);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill(stopSignal);
    });
  };
  return { child, output: () => output, stop };
}
