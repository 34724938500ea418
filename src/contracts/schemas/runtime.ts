import { z } from '@hono/zod-openapi';
import { anchored, PARAM_NAME, paramRefusal, referencedParams } from '../../domain/runtime-params.ts';
import { ENGINE_KINDS, SERVED_KINDS, SIM_SETTINGS, startTimeout, templated } from './engine.ts';

// A runtime as an admin writes it (PUT /api/v1/runtimes/{name}) and as the API shows it: the single
// source of its validation and of its OpenAPI schema. Operators only name runtimes and give parameters.

/** Where a value is kept from a reader: an environment variable's, set by an admin. */
export const HIDDEN = '(hidden)';

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MAX_LIST = 256;

const words = () =>
  z.array(templated(), { error: 'must be a list of strings' }).max(MAX_LIST, {
    error: `must have at most ${MAX_LIST} entries`,
  });

const bound = () => z.number({ error: 'must be a number' }).finite({ error: 'must be a finite number' });

const ParamRuleSchema = z
  .discriminatedUnion(
    'type',
    [
      z.strictObject({
        type: z.literal('string'),
        allowed: z
          .array(z.string().min(1).max(512), { error: 'must be a list of strings' })
          .min(1, { error: 'must list at least one value' })
          .max(MAX_LIST)
          .optional(),
        prefix: z.string().min(1, { error: 'must not be empty' }).max(512).optional(),
        pattern: z
          .string()
          .min(1)
          .max(512)
          .refine((text) => compiles(text), { error: 'is not a valid regular expression' })
          .optional(),
        default: z.string().optional(),
      }),
      z.strictObject({
        type: z.literal('integer'),
        min: bound(),
        max: bound(),
        default: z.number().optional(),
      }),
      z.strictObject({
        type: z.literal('number'),
        min: bound(),
        max: bound(),
        default: z.number().optional(),
      }),
      z.strictObject({ type: z.literal('boolean'), default: z.boolean().optional() }),
    ],
    {
      error: (issue) =>
        issue.code === 'invalid_union' ? 'must be "string", "integer", "number" or "boolean"' : undefined,
    },
  )
  .superRefine((rule, context) => {
    if (rule.type === 'string') {
      const rules = [rule.allowed, rule.prefix, rule.pattern].filter((r) => r !== undefined).length;
      if (rules !== 1)
        context.addIssue({
          code: 'custom',
          message: 'must give exactly one of allowed, prefix or pattern: no string is free',
        });
    }
    if ((rule.type === 'integer' || rule.type === 'number') && rule.min > rule.max)
      context.addIssue({ code: 'custom', message: `min (${rule.min}) is above max (${rule.max})` });
    if (rule.default !== undefined) {
      const why = paramRefusal(rule, rule.default);
      if (why) context.addIssue({ code: 'custom', path: ['default'], message: why });
    }
  })
  .openapi('RuntimeParam', {
    description:
      'what an operator may set: a string from a list, with a prefix or matching a pattern; a number in a range; a boolean',
  });

const compiles = (pattern: string) => {
  try {
    anchored(pattern);
    return true;
  } catch {
    return false;
  }
};

export const RuntimeInputSchema = z
  .strictObject({
    kind: z.enum(ENGINE_KINDS, {
      error: `must be one of ${ENGINE_KINDS.map((kind) => `"${kind}"`).join(', ')}`,
    }),
    description: z.string().max(1000).optional(),
    model: templated()
      .min(1, { error: 'must not be empty' })
      .optional()
      .openapi({ description: 'vllm, sglang, llama.cpp: what the engine loads, e.g. "{params.model}"' }),
    args: words().optional().openapi({ description: "vllm, sglang, llama.cpp: flags after llmgw's own" }),
    argv: words()
      .min(1, { error: 'must name the program to run' })
      .optional()
      .openapi({ description: 'command: the whole command line, run without a shell' }),
    env: z
      .record(z.string().regex(VARIABLE, { error: 'is not a variable name' }), templated())
      .optional()
      .openapi({ description: "fixed variables of the engine's environment; only admins read their values" }),
    secret_env: z
      .record(
        z.string().regex(VARIABLE, { error: 'is not a variable name' }),
        z.string().regex(SECRET_NAME, {
          error: 'must name a secret: 1 to 128 letters, digits, ".", "_" or "-"',
        }),
      )
      .optional()
      .openapi({
        description:
          'variable -> the name of a secret the agent reads on its node (LLMGW_AGENT_SECRETS_DIR/NAME); the API never holds the value',
      }),
    params: z
      .record(
        z.string().regex(PARAM_NAME, { error: 'is not a parameter name (a-z, 0-9, "_")' }),
        ParamRuleSchema,
      )
      .optional(),
    start_timeout_s: startTimeout,
  })
  .superRefine((runtime, context) => {
    const refuse = (path: string, message: string) =>
      context.addIssue({ code: 'custom', path: [path], message });
    const served = SERVED_KINDS.includes(runtime.kind);
    if (served && runtime.model === undefined) refuse('model', `is required for a ${runtime.kind} runtime`);
    if (runtime.kind === 'command' && runtime.argv === undefined)
      refuse('argv', 'is required for a command runtime');
    for (const field of ['model', 'args'] as const)
      if (!served && runtime[field] !== undefined)
        refuse(field, `is for vllm, sglang and llama.cpp runtimes only`);
    if (runtime.kind !== 'command' && runtime.argv !== undefined)
      refuse('argv', 'is for command runtimes only');
    if (runtime.kind === 'sim') {
      for (const field of ['env', 'secret_env'] as const)
        if (runtime[field] !== undefined)
          refuse(field, 'is not for sim runtimes: llmgw runs its own sim engine');
      for (const [param, rule] of Object.entries(runtime.params ?? {})) {
        const types: readonly string[] | undefined = SIM_SETTINGS[param as keyof typeof SIM_SETTINGS];
        if (!types?.includes(rule.type))
          refuse('params', `${param} is no setting of the sim engine (${simSettings()})`);
      }
    }
    for (const name of ['CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER'])
      if (runtime.env?.[name] !== undefined || runtime.secret_env?.[name] !== undefined)
        refuse('env', `must not set ${name}: the agent sets it to the replica's own GPUs`);
    const both = Object.keys(runtime.env ?? {}).find((name) => runtime.secret_env?.[name] !== undefined);
    if (both) refuse('secret_env', `sets ${both}, which env sets too`);
    const declared = Object.keys(runtime.params ?? {});
    const unknown = referencedParams(runtime).find((name) => !declared.includes(name));
    if (unknown) refuse('params', `must declare ${unknown}, which {params.${unknown}} names`);
  })
  .openapi('RuntimeInput', {
    description:
      'how engines run on nodes: an engine kind, its command line template, its environment, and the parameters an operator may set',
  });

const simSettings = () =>
  Object.entries(SIM_SETTINGS)
    .map(([name, types]) => `${name}: ${types.join(' or ')}`)
    .join(', ');

/** A runtime as GET shows it: a fixed variable's value only to an admin, a secret's value to no one. */
export const RuntimeViewSchema = z
  .object({
    name: z.string(),
    kind: z.string(),
    description: z.string().optional(),
    model: z.string().optional(),
    args: z.array(z.string()).optional(),
    argv: z.array(z.string()).optional(),
    env: z
      .record(z.string(), z.string())
      .optional()
      .openapi({
        description: `values are shown to admins; others read "${HIDDEN}"`,
      }),
    secret_env: z.record(z.string(), z.string()).optional(),
    params: z.record(z.string(), ParamRuleSchema).optional(),
    start_timeout_s: z.number().optional(),
    updated_by: z.string(),
    updated_at: z.string(),
  })
  .openapi('Runtime');

const ONE_VALUE = 'must be a string, a number or a boolean';

/** A profile's parameters as a PUT gives them; checked against its runtime by the handler. */
export const ParamsSchema = z
  .record(
    z.string().regex(PARAM_NAME, { error: 'is not a parameter name (a-z, 0-9, "_")' }),
    z.union([z.string().max(1024, { error: 'must be at most 1024 characters' }), z.number(), z.boolean()], {
      error: ONE_VALUE,
    }),
  )
  .openapi({ description: "values for the runtime's parameters, each checked against its rule" });
