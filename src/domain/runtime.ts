// Runtimes (issue 30): how engines run on nodes, defined by admins. A profile names a runtime and gives
// the parameters the runtime lets an operator set; nothing an operator writes becomes a command, a flag
// or an address on a node except through a parameter the runtime declared, checked against its rule.

/** A value an operator gives a runtime's parameter. */
export type ParamValue = string | number | boolean;

/** What one parameter of a runtime may be: a type and a rule (a list, a prefix, a pattern, a range). */
export type ParamRule =
  | { type: 'string'; allowed?: string[]; prefix?: string; pattern?: string; default?: string }
  | { type: 'integer' | 'number'; min: number; max: number; default?: number }
  | { type: 'boolean'; default?: boolean };

/**
 * A named runtime as an admin defines it. `model` and `args` (served kinds: vllm, sglang, llama.cpp)
 * or `argv` (command) and the values of `env` may hold `{params.NAME}`, filled with the parameter's
 * checked value, besides the replica's own `{port}`, `{model}` and `{replica}`.
 */
export interface RuntimeSpec {
  kind: string;
  description?: string;
  model?: string;
  args?: string[];
  argv?: string[];
  env?: Record<string, string>;
  /** Variable name -> the name of a secret the agent reads on its node; the value never passes the API. */
  secret_env?: Record<string, string>;
  params?: Record<string, ParamRule>;
  start_timeout_s?: number;
}

export interface Runtime extends RuntimeSpec {
  name: string;
  updated_by: string;
  updated_at: string;
}
