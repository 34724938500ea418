/** Where `llmgw ctl` writes and what it reads from its environment; tests pass their own. */
export interface CtlIo {
  /** A line (or block) for stdout; a newline is added. */
  out(text: string): void;
  /** A line (or block) for stderr; a newline is added. */
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** The terminal's width, when stdout is one. */
  columns?: number;
}

export const processIo: CtlIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  get columns() {
    return process.stdout.isTTY ? process.stdout.columns : undefined;
  },
};
