import type { ModelSummary } from '../contracts/schemas/models.ts';
import type { Pending } from '../domain/decision.ts';
import { isPendingCode } from '../domain/decision.ts';
import { pendingSentence } from '../policy/explain.ts';
import { Meter } from './figures.tsx';

// What the Models page and a model's own page both show of a model's summary (GET /api/v1/models).

/** "2 ready, 1 starting"; "none". */
export function replicaCounts(counts: Record<string, number>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

/** What the model waits for, in the reconciler's words; null when its newest decision waits for nothing. */
export function pendingReason(summary: ModelSummary): string | null {
  const pending = summary.last_decision?.inputs.pending;
  if (!Array.isArray(pending) || pending.length === 0) return null;
  const known = (pending as Pending[]).filter((p) => isPendingCode(p.code));
  return known.length > 0 ? pendingSentence(known) : null;
}

/** Requests in flight against what the serving replicas take at their SLO. */
export function LoadMeter({ summary }: { summary: ModelSummary }) {
  const load = summary.in_flight;
  const capacity = summary.capacity_at_slo;
  const words = `${load === null ? 'load unknown' : `${load} in flight`} of ${capacity} at SLO`;
  return (
    <div class="bar-row">
      <Meter
        scale={Math.max(load ?? 0, capacity)}
        label={words}
        segments={[{ value: load ?? 0, kind: load !== null && load > capacity ? 'over' : 'held' }]}
        marks={[{ value: capacity, kind: 'limit' }]}
      />
      <span class="figures load-figures">{words}</span>
    </div>
  );
}
