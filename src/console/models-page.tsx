import type { ModelSummary } from '../contracts/schemas/models.ts';
import { loadHistory } from '../store/changes.ts';
import { Sparkline } from './figures.tsx';
import { Page } from './layout.tsx';
import { LoadMeter, pendingReason, replicaCounts } from './model-summary.tsx';
import { type PageContext, reconcilerLink } from './page-context.ts';

const HOUR_MS = 3600_000;

/** Every model the token sees: replicas by state, load against capacity, its last hour, its last decision. */
export async function modelsPage(ctx: PageContext) {
  const models = await ctx.api.get<ModelSummary[]>('/api/v1/models');
  // Only for the models the API shows this token: the history adds figures, never names, and a
  // team's viewer does not pay for reading every model's hour.
  const history = await loadHistory(
    ctx.sql,
    ctx.now - HOUR_MS,
    models.map((m) => m.name),
  );
  return (
    <Page title="Models" viewer={ctx.viewer} path="/ui/models" live>
      {models.length === 0 ? (
        <p>No model is in view of this token.</p>
      ) : (
        <table class="models">
          <thead>
            <tr>
              <th>Model</th>
              <th>Owner</th>
              <th>Replicas</th>
              <th>Load (requests)</th>
              <th>Last hour</th>
              <th>Last decision</th>
            </tr>
          </thead>
          <tbody>
            {models.map((model) => (
              <ModelRow model={model} ctx={ctx} points={history.get(model.name) ?? []} />
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

function ModelRow(props: {
  model: ModelSummary;
  ctx: PageContext;
  points: Parameters<typeof Sparkline>[0]['points'];
}) {
  const { model, ctx } = props;
  const pending = pendingReason(model);
  return (
    <tr data-model={model.name}>
      <td data-label="Model">
        <a href={`/ui/models/${encodeURIComponent(model.name)}`}>{model.name}</a>
        <br />
        <a class="small" href={reconcilerLink(ctx, model.name)}>
          reconciler in Temporal
        </a>
      </td>
      <td data-label="Owner">{model.owner_name ?? 'none'}</td>
      <td class="replicas" data-label="Replicas">
        {replicaCounts(model.replicas)}
      </td>
      <td data-label="Load">
        <LoadMeter summary={model} />
      </td>
      <td data-label="Last hour">
        <Sparkline
          points={props.points}
          hourMs={HOUR_MS}
          now={{ at: ctx.now, in_flight: model.in_flight, capacity_at_slo: model.capacity_at_slo }}
        />
      </td>
      <td class="decision" data-label="Last decision">
        {model.last_decision ? model.last_decision.reason : 'no decision yet'}
        {pending ? <p class="pending">waiting: {pending}</p> : null}
      </td>
    </tr>
  );
}
