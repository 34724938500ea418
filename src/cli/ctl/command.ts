import type { ApiClient } from './client.ts';
import type { Output } from './output.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The placeholder in help, e.g. "R" in `--limit R`. */
  value?: string;
  description: string;
  /** Shown in the usage line without brackets. */
  required?: boolean;
}

export interface Context {
  /** Created on first use, so that commands which need no server (bench without --store) need none. */
  api(): ApiClient;
  out: Output;
  /** Reads a file the command was given (-f); a missing one is a Failed, not a crash. */
  readFile(path: string): string;
}

export interface Input {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** One `llmgw ctl` command: its words, its arguments and options, its help, and what it does. */
export interface Command {
  /** The words after `llmgw ctl`, e.g. "quota set". */
  path: string;
  /** Positional arguments as shown in usage, e.g. "SCOPE". */
  args?: string;
  /** How many positional arguments it takes. */
  positionals?: { min: number; max: number };
  summary: string;
  /** More to say in its --help, after the summary. */
  details?: string;
  options?: Record<string, OptionSpec>;
  examples: string[];
  run(ctx: Context, input: Input): Promise<void>;
}
