import { may } from '../contracts/permissions.ts';
import type { ModelSummary } from '../contracts/schemas/models.ts';
import type { ReplicaAnswer } from '../contracts/schemas/replicas.ts';
import { ENDED_STATES } from '../domain/cluster.ts';
import type { Measurement, Profile } from '../domain/model.ts';
import { orderProfiles } from '../policy/profiles.ts';
import { formatNumber, formatResources } from '../policy/resources.ts';
import type { SizingPlan } from '../policy/sizing.ts';
import { NO_REPLICA_TO_ADD, sizingOutcome } from '../policy/sizing-words.ts';
import type { StoredDecision } from '../store/decisions.ts';
import { ApiRefusal } from './api-client.ts';
import { Page, Problem } from './layout.tsx';
import { LoadMeter, pendingReason, replicaCounts } from './model-summary.tsx';
import { type PageContext, reconcilerLink } from './page-context.ts';

type ModelDetail = ModelSummary & { profiles: Profile[]; warnings?: string[] };

/** A replica as GET /api/v1/replicas answers it. */
export type ReplicaRow = ReplicaAnswer;

/** One model: its decisions as a timeline, its replicas, its profiles in trial order, and a sizing preview. */
export async function modelPage(ctx: PageContext, name: string) {
  const path = encodeURIComponent(name);
  const [model, decisions, replicas, measurements] = await Promise.all([
    ctx.api.get<ModelDetail>(`/api/v1/models/${path}`),
    ctx.api.get<StoredDecision[]>(`/api/v1/models/${path}/decisions?limit=50`),
    ctx.api.get<ReplicaRow[]>(`/api/v1/replicas?model=${path}`),
    ctx.api.get<Measurement[]>(`/api/v1/measurements?model=${path}`),
  ]);
  const measured = new Map(measurements.map((m) => [m.profile, m]));
  const pending = pendingReason(model);
  return (
    <Page title={`Model ${name}`} viewer={ctx.viewer} path="/ui/models" live>
      <section class="summary">
        <p>
          Owner {model.owner_name ?? 'none'} · priority {model.priority} · {model.min_replicas} to{' '}
          {model.max_replicas} replicas
          {model.target_tokens_per_sec !== undefined
            ? ` · target ${model.target_tokens_per_sec} tokens/s`
            : ''}{' '}
          · <a href={reconcilerLink(ctx, name)}>reconciler in Temporal</a>
        </p>
        <p class="replicas">Replicas: {replicaCounts(model.replicas)}</p>
        <LoadMeter summary={model} />
        {pending ? <p class="pending">waiting: {pending}</p> : null}
        {(model.warnings ?? []).map((warning) => (
          <p class="warning">{warning}</p>
        ))}
      </section>
      <h2>Replicas</h2>
      <ReplicaTable replicas={replicas.filter((r) => !ENDED_STATES.includes(r.state))} />
      <EndedReplicas replicas={replicas} />
      <h2>Profiles, in the order they are tried</h2>
      <ol class="profiles">
        {orderProfiles({ ...model, owner: null }, measured).map((profile) => (
          <ProfileItem profile={profile} measurement={measured.get(profile.name)} />
        ))}
      </ol>
      {may(ctx.viewer.who, 'change-model').allowed ? await TargetPreview({ ctx, path }) : null}
      <h2>Decisions, newest first</h2>
      <ol class="timeline">
        {decisions.map((d) => (
          <li class={`decision action-${d.action}`}>
            <time datetime={d.at}>{d.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>{' '}
            <span class="action">{d.action}</span> {d.reason}
          </li>
        ))}
      </ol>
    </Page>
  );
}

function ReplicaTable({ replicas }: { replicas: ReplicaRow[] }) {
  if (replicas.length === 0) return <p>No replica runs.</p>;
  return (
    <table class="replicas-table">
      <thead>
        <tr>
          <th>Replica</th>
          <th>State</th>
          <th>Node</th>
          <th>Profile</th>
          <th>Resources</th>
          <th>Guarantee</th>
          <th>Endpoint</th>
        </tr>
      </thead>
      <tbody>
        {replicas.map((r) => (
          <tr data-replica={r.id}>
            <td data-label="Replica">{r.id}</td>
            <td data-label="State">{r.state}</td>
            <td data-label="Node">{r.node}</td>
            <td data-label="Profile">{r.profile}</td>
            <td data-label="Resources">{formatResources(r.resources)}</td>
            <td data-label="Guarantee">{r.protected ? 'protected' : 'borrowed'}</td>
            <td data-label="Endpoint">{r.endpoint ?? 'none yet'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Replicas that failed to start, crashed or were lost, newest first, with why: what their logs said. */
function EndedReplicas({ replicas }: { replicas: ReplicaRow[] }) {
  const ended = replicas
    .filter((r) => r.reason && (r.state === 'failed' || r.state === 'crashed' || r.state === 'lost'))
    .reverse()
    .slice(0, ENDED_SHOWN);
  if (ended.length === 0) return null;
  return (
    <>
      <h3>Failed, crashed or lost, newest first</h3>
      <ul class="ended-replicas">
        {ended.map((r) => (
          <li data-replica={r.id}>
            <strong>{r.id}</strong> {r.state} on {r.node}: <pre>{r.reason}</pre>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The ended replicas the model's page shows: the newest say what is wrong now. */
const ENDED_SHOWN = 5;

function ProfileItem({ profile, measurement }: { profile: Profile; measurement?: Measurement }) {
  return (
    <li data-profile={profile.name}>
      <strong>{profile.name}</strong> (priority {profile.priority}): {formatResources(profile.resources)}
      {profile.gpu_model ? ` on ${profile.gpu_model}` : ''}
      {measurement
        ? `; measured ${measurement.max_concurrency_at_slo} requests at SLO, ${measurement.throughput_tok_per_sec} tokens/s (${measurement.measured_at})`
        : '; not measured'}
    </li>
  );
}

/** `llmgw ctl model target`: the replicas a throughput needs, asked with apply false, so nothing is stored. */
async function TargetPreview({ ctx, path }: { ctx: PageContext; path: string }) {
  const given = ctx.query.tokens_per_sec;
  const tokensPerSec = Number(given);
  let answer: SizingPlan | { problem: string } | undefined;
  if (given !== undefined) {
    if (given.trim() === '' || !Number.isFinite(tokensPerSec) || tokensPerSec <= 0) {
      ctx.status(400);
      answer = { problem: `"${given}" is not a throughput: give tokens per second above 0` };
    } else {
      answer = await ctx.api
        .post<SizingPlan>(`/api/v1/models/${path}/target`, { tokens_per_sec: tokensPerSec, apply: false })
        .catch((error: unknown) => {
          if (!(error instanceof ApiRefusal) || error.status >= 500) throw error;
          ctx.status(error.status);
          return { problem: error.message };
        });
    }
  }
  return (
    <section class="target">
      <h2>Size for a throughput (a preview: nothing is stored)</h2>
      <form method="get" class="inline">
        <label for="tokens_per_sec">Tokens/s</label>
        <input id="tokens_per_sec" name="tokens_per_sec" inputmode="decimal" value={given ?? ''} required />
        <button type="submit">Preview</button>
      </form>
      {answer && 'problem' in answer ? <Problem sentence={answer.problem} /> : null}
      {answer && 'plan' in answer ? (
        <div class="plan">
          {answer.plan.length === 0 ? (
            <p class="steps">{NO_REPLICA_TO_ADD}</p>
          ) : (
            <ul class="steps">
              {answer.plan.map((step) => (
                <li>
                  {step.replicas} of {step.profile}: {formatNumber(step.tokens_per_sec)} tokens/s
                </li>
              ))}
            </ul>
          )}
          {/* The words of `llmgw ctl model target`, from the same function. */}
          <ul class="outcome">
            {sizingOutcome(answer, tokensPerSec).map((line) => (
              <li>{line}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
