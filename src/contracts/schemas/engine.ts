import { z } from '@hono/zod-openapi';

// A profile's engine: how the agent on a node runs one replica of it (src/agent/engine-command.ts).
// Messages are completed with the field's path by the API ("profiles.0.engine.model is required").

/** The placeholders a command engine's argv and env may hold, filled in for each replica. */
export const PLACEHOLDERS = ['port', 'host', 'model', 'replica'] as const;

/** Longer than any flag or path an engine takes; an argument longer than this is a mistake. */
const MAX_ARG_CHARS = 8192;
const MAX_ARGS = 256;

/** A type's sentence, unless the field is missing: then the API says it is required. */
const unlessMissing = (sentence: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? undefined : sentence;

/** One word of a command line: exec refuses a NUL inside one, so it is refused here, in a sentence. */
const word = () =>
  z
    .string({ error: unlessMissing('must be a string') })
    .max(MAX_ARG_CHARS, { error: `must be at most ${MAX_ARG_CHARS} characters` })
    .refine((text) => !text.includes('\u0000'), { error: 'must not contain a NUL character' });

/** Placeholder-shaped names (`{prot}`) that are none of PLACEHOLDERS: a typo that would reach the engine. */
const unknownPlaceholder = (text: string) =>
  [...text.matchAll(/\{([a-z_]+)\}/g)].find(
    ([, name]) => !(PLACEHOLDERS as readonly string[]).includes(name),
  )?.[0];

export const templated = () =>
  word().superRefine((text, context) => {
    const unknown = unknownPlaceholder(text);
    if (unknown) {
      context.addIssue({
        code: 'custom',
        message: `names ${unknown}, which is no placeholder (they are ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')})`,
      });
    }
  });

/** The kinds that load a model and take flags after llmgw's own (`model` and `args`), not a whole argv. */
export const SERVED_KINDS: readonly string[] = ['vllm', 'sglang', 'llama.cpp'];

/** The settings of the sim engine a sim runtime's parameters may set, and what each must be. */
export const SIM_SETTINGS = {
  max_batch: ['integer'],
  base_tpot_ms: ['integer', 'number'],
  tpot_growth_ms: ['integer', 'number'],
  fail_start: ['boolean'],
  metrics: ['boolean'],
} as const;

const args = () =>
  z
    .array(word(), { error: 'must be a list of strings' })
    .max(MAX_ARGS, { error: `must have at most ${MAX_ARGS} arguments` })
    .optional()
    .openapi({ description: "added after the engine's own flags, as they are" });

const modelPath = () =>
  word()
    .min(1, { error: 'must not be empty' })
    .openapi({ description: 'what the engine loads: a Hugging Face ID or a path on the node' });

export const DEFAULT_START_TIMEOUT_S = 600;

/** How long the agent waits for a new replica to answer its health check before it calls it failed. */
export const startTimeout = z
  .number({ error: 'must be a number of seconds' })
  .int({ error: 'must be a whole number of seconds' })
  .min(1, { error: 'must be at least 1 second' })
  .max(86_400, { error: 'must be at most 86400 seconds (a day)' })
  .optional()
  .openapi({ description: `seconds a replica may take to become ready; default ${DEFAULT_START_TIMEOUT_S}` });

const served = <Kind extends string>(kind: Kind) =>
  z.strictObject({ kind: z.literal(kind), model: modelPath(), args: args(), start_timeout_s: startTimeout });

const VllmEngineSchema = served('vllm').openapi('VllmEngine');
const SglangEngineSchema = served('sglang').openapi('SglangEngine');
const LlamaCppEngineSchema = served('llama.cpp').openapi('LlamaCppEngine');

const CommandEngineSchema = z
  .strictObject({
    kind: z.literal('command'),
    argv: z
      .array(templated(), { error: unlessMissing('must be a list of strings') })
      .min(1, { error: 'must name the program to run' })
      .max(MAX_ARGS, { error: `must have at most ${MAX_ARGS} arguments` })
      .refine((argv) => argv[0] !== '', { error: 'must start with the program to run, not ""' }),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), templated(), {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'is not a variable name (letters, digits and "_", not starting with a digit)'
            : 'must be an object of variable names to strings',
      })
      .refine((env) => !('CUDA_VISIBLE_DEVICES' in env), {
        error: "must not set CUDA_VISIBLE_DEVICES: the agent sets it to the replica's own GPUs",
      })
      .optional(),
    start_timeout_s: startTimeout,
  })
  .openapi('CommandEngine', {
    description: 'any program serving the OpenAI API; {port}, {model} and {replica} are filled in',
  });

const rate = () =>
  z.number({ error: 'must be a number' }).min(0, { error: 'must not be negative' }).max(60_000, {
    error: 'must be at most 60000',
  });

/** The simulated engine (src/cluster/sim/engine.ts), with the settings the sim cluster reads. */
const SimEngineSchema = z
  .strictObject({
    kind: z.literal('sim'),
    max_batch: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(1_000_000, { error: 'must be at most 1000000' })
      .optional()
      .openapi({ description: "requests served at once; default the profile's default_concurrency, else 8" }),
    base_tpot_ms: rate()
      .optional()
      .openapi({ description: 'ms between tokens of a request alone; default 20' }),
    tpot_growth_ms: rate()
      .optional()
      .openapi({ description: 'ms each further request served at once adds; default 2' }),
    fail_start: z.boolean({ error: 'must be true or false' }).optional(),
    metrics: z.boolean({ error: 'must be true or false' }).optional().openapi({
      description: 'false: nobody scrapes its /metrics, so its replica reports no load',
    }),
    start_timeout_s: startTimeout,
  })
  .openapi('SimEngine');

/** Every engine kind, one entry each: a runtime's kind is one of these too (runtime.ts). */
export const ENGINE_KINDS = ['vllm', 'sglang', 'llama.cpp', 'command', 'sim'] as const;

export const EngineSchema = z
  .discriminatedUnion(
    'kind',
    [VllmEngineSchema, SglangEngineSchema, LlamaCppEngineSchema, CommandEngineSchema, SimEngineSchema],
    {
      error: (issue) =>
        issue.code === 'invalid_union'
          ? `must be one of ${ENGINE_KINDS.map((kind) => `"${kind}"`).join(', ')}`
          : undefined,
    },
  )
  .openapi('Engine', { description: 'How the agent on a node runs a replica of the profile' });

export type EngineSpec = z.infer<typeof EngineSchema>;
export type CommandEngine = z.infer<typeof CommandEngineSchema>;
export type SimEngineSpec = z.infer<typeof SimEngineSchema>;
