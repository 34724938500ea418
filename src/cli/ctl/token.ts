import type { components } from './api.gen.ts';
import type { Command } from './command.ts';
import { UsageError } from './errors.ts';
import { table } from './output.ts';
import { parseResources } from './resources.ts';

// The API's answers as its OpenAPI document describes them (api.gen.ts, `npm run api-types`).
type Issued = components['schemas']['IssuedToken'];
type TokenRow = components['schemas']['Token'];

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d` from now as an RFC 3339 timestamp; units m, h, d, w. */
function expiresAt(text: string, now = Date.now()): string {
  const match = /^(\d{1,6})([mhdw])$/.exec(text.trim());
  if (!match || Number(match[1]) === 0) {
    throw new UsageError(`--expires-in ${text}: give a count and a unit m, h, d or w, e.g. 30d`);
  }
  return new Date(now + Number(match[1]) * UNIT_MS[match[2]]).toISOString();
}

const ROLES_HELP = [
  'ROLE is one of:',
  '  admin     everything: nodes, tokens, any quota, the audit log',
  '  operator  projects, quotas and models beneath --scope (models owned by the scope itself too)',
  '  viewer    reads only; with --scope, only that subtree',
  '  reporter  only reports load (model load); with --models or --scope, only for those models',
  "  metrics   only reads GET /metrics (for Prometheus: every tenant's figures)",
  '  agent     an llmgw agent: registers and reports for its --node only, at its --address, declaring',
  '            at most --max-capacity, and only --gpu-model and --labels (each optional: none if left out)',
].join('\n');

/** `zone=a,rack=3` as labels. */
function parseLabels(text: string): Record<string, string> {
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new UsageError(`--labels takes k=v,k=v, not "${pair}"`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}

/** An agent's node's address and bounds, from its flags; nothing when none of them is given. */
function nodeGrant(values: Record<string, string | undefined>) {
  const { address, 'max-capacity': capacity, 'gpu-model': gpuModel, labels } = values;
  const bounds = {
    ...(capacity !== undefined && { capacity: parseResources(capacity, '--max-capacity') }),
    ...(gpuModel !== undefined && { gpu_model: gpuModel }),
    ...(labels !== undefined && { labels: parseLabels(labels) }),
  };
  return {
    ...(address !== undefined && { node_address: address }),
    ...(Object.keys(bounds).length > 0 && { node_bounds: bounds }),
  };
}

export const TOKEN_COMMANDS: Command[] = [
  {
    path: 'token create',
    summary: 'Make a bearer token and print its secret, this once (admins only).',
    details: `${ROLES_HELP}\nThe secret goes to stdout alone, so it can be captured; it is kept nowhere.`,
    options: {
      name: {
        type: 'string',
        value: 'NAME',
        description: 'who uses it (recorded as updated_by)',
        required: true,
      },
      role: {
        type: 'string',
        value: 'ROLE',
        description: 'admin, operator, viewer, reporter, metrics, client or agent',
        required: true,
      },
      scope: {
        type: 'string',
        value: 'SCOPE',
        description: "the operator's or client's scope, or a viewer's or reporter's subtree",
      },
      models: { type: 'string', value: 'A,B', description: 'the only models a reporter reports for' },
      node: { type: 'string', value: 'NODE', description: "an agent's node (required for an agent)" },
      address: {
        type: 'string',
        value: 'ADDRESS',
        description: "an agent's node's IP address or host name, where its engines listen (required)",
      },
      'max-capacity': {
        type: 'string',
        value: 'gpus=8,cores=96,memory_gib=1024',
        description: "the most an agent's node may declare (required; a dimension left out: none)",
      },
      'gpu-model': {
        type: 'string',
        value: 'MODEL',
        description: "the GPU model an agent's node may declare",
      },
      labels: { type: 'string', value: 'k=v,k=v', description: "the labels an agent's node may declare" },
      'expires-in': {
        type: 'string',
        value: 'DURATION',
        description: 'e.g. 90m, 12h, 30d, 4w; default never',
      },
    },
    examples: [
      'llmgw ctl token create --name ml-ops --role operator --scope team:Acme/ml --expires-in 30d',
      'llmgw ctl token create --name gw-1 --role reporter --models chat,code',
      'export OPENAI_API_KEY=$(llmgw ctl token create --name ml-app --role client --scope team:Acme/ml)',
      'export LLMGW_TOKEN=$(llmgw ctl token create --name dana --role viewer --scope org:Acme)',
      'llmgw ctl token create --name agent-gpu-1 --role agent --node gpu-1 --address 10.0.0.11 --max-capacity gpus=8,cores=96,memory_gib=1024 --gpu-model H100 --labels zone=a',
    ],
    async run(ctx, input) {
      const { name, role, scope, models, node } = input.values as Record<string, string | undefined>;
      const expiresIn = input.values['expires-in'] as string | undefined;
      const body = {
        name,
        role,
        ...(scope === undefined ? {} : { scope }),
        ...(models === undefined ? {} : { models: models.split(',').map((m) => m.trim()) }),
        ...(node === undefined ? {} : { node }),
        ...nodeGrant(input.values as Record<string, string | undefined>),
        ...(expiresIn === undefined ? {} : { expires_at: expiresAt(expiresIn) }),
      };
      const { body: issued } = await ctx.api().call<Issued>('POST', '/tokens', body);
      if (ctx.out.format === 'table') {
        ctx.out.note(`created token ${issued.name} (${issued.role}); its secret is shown this once:`);
      }
      ctx.out.show(issued, () => issued.token);
    },
  },
  {
    path: 'token list',
    summary: 'List tokens: name, role, scope, models, expiry (never their secrets).',
    examples: ['llmgw ctl token list'],
    async run(ctx) {
      const tokens = await ctx.api().get<TokenRow[]>('/tokens');
      ctx.out.show(tokens, () =>
        table(
          ['NAME', 'ROLE', 'SCOPE', 'MODELS', 'EXPIRES_AT', 'CREATED_BY', 'CREATED_AT'],
          tokens.map((t) => [
            t.name,
            t.role,
            t.scope_name ?? t.scope,
            t.models?.join(','),
            t.expires_at,
            t.created_by,
            t.created_at,
          ]),
          'no tokens',
        ),
      );
    },
  },
  {
    path: 'token revoke',
    args: 'NAME',
    positionals: { min: 1, max: 1 },
    summary: 'Revoke a token: it stops working at once.',
    examples: ['llmgw ctl token revoke gw-1'],
    async run(ctx, { positionals: [name] }) {
      const { body } = await ctx.api().call('DELETE', `/tokens/${encodeURIComponent(name)}`);
      ctx.out.show(body, () => `revoked token ${name}`);
    },
  },
];
