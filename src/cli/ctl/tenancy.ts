import type { components } from './api.gen.ts';
import type { Command } from './command.ts';
import { Failed, UsageError } from './errors.ts';
import { table } from './output.ts';

/** An org, team or project, as the API's OpenAPI document describes them (api.gen.ts, `npm run api-types`). */
type ScopeRow =
  | components['schemas']['Org']
  | components['schemas']['Team']
  | components['schemas']['Project'];

const LEVELS = [
  { kind: 'org', a: 'an org', plural: 'orgs', parentField: null, example: 'Acme', parentWord: null },
  { kind: 'team', a: 'a team', plural: 'teams', parentField: 'org', example: 'Acme/ml', parentWord: 'ORG' },
  {
    kind: 'project',
    a: 'a project',
    plural: 'projects',
    parentField: 'team',
    example: 'Acme/ml/training',
    parentWord: 'ORG/TEAM',
  },
] as const;

/** Paths compare as the API compares them: case and spaces around "/" do not matter. */
const normalize = (path: string) =>
  path
    .split('/')
    .map((segment) => segment.trim().toLowerCase())
    .join('/');

const pathOf = (row: ScopeRow) => ('path' in row ? row.path : row.name);

/** Orgs, teams and projects: create, list, rm; one shape for the three levels, as in the API. */
export const TENANCY_COMMANDS: Command[] = LEVELS.flatMap(
  ({ kind, a, plural, parentField, example, parentWord }) => {
    const pathArg = parentWord ? `${parentWord}/NAME` : 'NAME';
    const create: Command = {
      path: `${kind} create`,
      args: pathArg,
      positionals: { min: 1, max: 1 },
      summary: parentWord
        ? `Create ${a}: the last segment is its name, the rest names its ${parentField} (path or ID).`
        : 'Create an org.',
      examples: [`llmgw ctl ${kind} create ${example}`],
      async run(ctx, { positionals: [path] }) {
        const cut = path.lastIndexOf('/');
        if (parentField === null && cut >= 0) throw new UsageError(`an org's name has no "/": ${path}`);
        if (parentField !== null && cut < 0)
          throw new UsageError(`give the ${kind} as ${pathArg}, e.g. ${example}`);
        const name = path.slice(cut + 1).trim();
        const body = parentField ? { [parentField]: path.slice(0, cut).trim(), name } : { name };
        const { body: created } = await ctx.api().call<ScopeRow>('POST', `/${plural}`, body);
        ctx.out.show(created, () => `created ${kind} ${pathOf(created)} (${kind}:${created.id})`);
      },
    };

    const list: Command = {
      path: `${kind} list`,
      summary: `List the ${plural}.`,
      examples: [`llmgw ctl ${kind} list`, `llmgw ctl ${kind} list -o json`],
      async run(ctx) {
        const rows = await ctx.api().get<ScopeRow[]>(`/${plural}`);
        ctx.out.show(rows, () =>
          table(
            [parentField ? 'PATH' : 'NAME', 'ID'],
            rows.map((row) => [pathOf(row), row.id]),
            `no ${plural}`,
          ),
        );
      },
    };

    const rm: Command = {
      path: `${kind} rm`,
      args: `${pathArg}|ID`,
      positionals: { min: 1, max: 1 },
      summary: `Delete ${a}; the server refuses while it has children, models or a quota.`,
      examples: [`llmgw ctl ${kind} rm ${example}`],
      async run(ctx, { positionals: [given] }) {
        const rows = await ctx.api().get<ScopeRow[]>(`/${plural}`);
        const found =
          rows.find((row) => row.id === given) ??
          rows.find((row) => normalize(pathOf(row)) === normalize(given));
        if (!found) throw new Failed(`there is no ${kind} "${given}"`);
        const { body } = await ctx.api().call('DELETE', `/${plural}/${encodeURIComponent(found.id)}`);
        ctx.out.show(body, () => `removed ${kind} ${pathOf(found)} (${kind}:${found.id})`);
      },
    };
    return [create, list, rm];
  },
);
