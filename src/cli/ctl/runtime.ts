import { describeRule } from '../../domain/runtime-params.ts';
import type { components } from './api.gen.ts';
import { applyFile } from './apply-file.ts';
import type { Command } from './command.ts';
import { table } from './output.ts';

/** A runtime, as the API's OpenAPI document describes it (api.gen.ts, `npm run api-types`). */
type Runtime = components['schemas']['Runtime'];

const runtimePath = (name = '') => `/runtimes${name && `/${encodeURIComponent(name)}`}`;

function detailText(runtime: Runtime): string {
  const line = (label: string, value: string | undefined) =>
    value ? [`${`${label}:`.padEnd(12)}${value}`] : [];
  const pairs = (record: Record<string, string> | undefined, arrow: string) =>
    Object.entries(record ?? {})
      .map(([name, value]) => `${name}${arrow}${value}`)
      .join(', ');
  return [
    ...line('name', runtime.name),
    ...line('kind', runtime.kind),
    ...line('about', runtime.description),
    ...line('model', runtime.model),
    ...line('args', runtime.args?.join(' ')),
    ...line('argv', runtime.argv?.join(' ')),
    ...line('env', pairs(runtime.env, '=')),
    ...line('secret env', pairs(runtime.secret_env, ' <- secret ')),
    ...line('updated', `${runtime.updated_at} by ${runtime.updated_by}`),
    'params:',
    ...Object.entries(runtime.params ?? {}).map(([name, rule]) => `  ${name}: ${describeRule(rule)}`),
  ].join('\n');
}

export const RUNTIME_COMMANDS: Command[] = [
  {
    path: 'runtime apply',
    summary:
      'Define or replace the runtimes of a YAML file (PUT /api/v1/runtimes/NAME for each; admins only).',
    details: [
      'The file holds one runtime per YAML document. {params.NAME} in model, args, argv or env is filled',
      "with the operator's value for NAME, checked against its rule; {port}, {model} and {replica} with the",
      "replica's own. secret_env names secrets the agent reads on its node (LLMGW_AGENT_SECRETS_DIR/NAME).",
      '  name: vllm-chat',
      '  kind: vllm',
      '  model: "{params.model}"',
      '  args: ["--max-model-len", "{params.max_model_len}"]',
      '  secret_env: { HF_TOKEN: hf-token }',
      '  params:',
      '    model: { type: string, prefix: "Qwen/" }',
      '    max_model_len: { type: integer, min: 1024, max: 32768, default: 8192 }',
    ].join('\n'),
    options: {
      file: { type: 'string', short: 'f', value: 'FILE', description: 'the YAML file', required: true },
    },
    examples: ['llmgw ctl runtime apply -f runtimes.yaml'],
    run: (ctx, input) => applyFile(ctx, input.values.file as string, 'runtime', runtimePath),
  },
  {
    path: 'runtime list',
    summary: 'List runtimes: their kind and the parameters an operator may set.',
    examples: ['llmgw ctl runtime list', 'llmgw ctl runtime list -o json'],
    async run(ctx) {
      const runtimes = await ctx.api().get<Runtime[]>(runtimePath());
      ctx.out.show(runtimes, () =>
        table(
          ['NAME', 'KIND', 'PARAMS', 'ENV', 'UPDATED_BY'],
          runtimes.map((r) => [
            r.name,
            r.kind,
            Object.keys(r.params ?? {}).join(',') || '-',
            [...Object.keys(r.env ?? {}), ...Object.keys(r.secret_env ?? {})].join(',') || '-',
            r.updated_by,
          ]),
          'no runtimes',
        ),
      );
    },
  },
  {
    path: 'runtime get',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: "One runtime: its command line, environment (values to admins only) and parameters' rules.",
    examples: ['llmgw ctl runtime get vllm-chat', 'llmgw ctl runtime get vllm-chat -o yaml'],
    async run(ctx, { positionals: [name] }) {
      const runtime = await ctx.api().get<Runtime>(runtimePath(name));
      ctx.out.show(runtime, () => detailText(runtime));
    },
  },
  {
    path: 'runtime rm',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: 'Remove a runtime; the server refuses while profiles name it (admins only).',
    examples: ['llmgw ctl runtime rm vllm-chat'],
    async run(ctx, { positionals: [name] }) {
      const { body } = await ctx.api().call('DELETE', runtimePath(name));
      ctx.out.show(body, () => `removed runtime ${name}`);
    },
  },
];
