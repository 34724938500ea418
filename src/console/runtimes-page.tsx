import type { Runtime } from '../domain/runtime.ts';
import { describeRule } from '../domain/runtime-params.ts';
import { Page } from './layout.tsx';
import type { PageContext } from './page-context.ts';

/**
 * The runtimes admins defined (GET /api/v1/runtimes): what each runs and the parameters an operator's
 * profile may give it. Variables show by name; their values only as the API shows them to the token.
 */
export async function runtimesPage(ctx: PageContext) {
  const runtimes = await ctx.api.get<Runtime[]>('/api/v1/runtimes');
  return (
    <Page title="Runtimes" viewer={ctx.viewer} path="/ui/runtimes">
      <p class="legend">
        Defined by admins; a profile names one and gives the parameters below, each checked against its rule.
      </p>
      {runtimes.length === 0 ? (
        <p>No runtime is defined yet.</p>
      ) : (
        <table class="runtimes">
          <thead>
            <tr>
              <th>Runtime</th>
              <th>Kind</th>
              <th>Runs</th>
              <th>Parameters</th>
              <th>Environment</th>
            </tr>
          </thead>
          <tbody>
            {runtimes.map((runtime) => (
              <RuntimeRow runtime={runtime} />
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

function RuntimeRow({ runtime }: { runtime: Runtime }) {
  const runs =
    runtime.kind === 'sim'
      ? ['llmgw sim-engine']
      : (runtime.argv ?? [runtime.model, ...(runtime.args ?? [])].filter((word) => word !== undefined));
  return (
    <tr data-runtime={runtime.name}>
      <td>
        <strong>{runtime.name}</strong>
        {runtime.description ? <div class="about">{runtime.description}</div> : null}
      </td>
      <td class="kind">{runtime.kind}</td>
      <td class="runs">
        <code>{runs.join(' ')}</code>
      </td>
      <td>
        <ul class="params">
          {Object.entries(runtime.params ?? {}).map(([name, rule]) => (
            <li data-param={name}>
              <code>{name}</code>: {describeRule(rule)}
            </li>
          ))}
        </ul>
      </td>
      <td>
        <ul class="env">
          {Object.entries(runtime.env ?? {}).map(([name, value]) => (
            <li data-env={name}>
              <code>{name}</code>={value}
            </li>
          ))}
          {Object.entries(runtime.secret_env ?? {}).map(([name, secret]) => (
            <li data-env={name}>
              <code>{name}</code> from the node's secret <code>{secret}</code>
            </li>
          ))}
        </ul>
      </td>
    </tr>
  );
}
