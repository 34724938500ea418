import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../config.ts';
import type { ReplicaState } from '../domain/cluster.ts';
import type { ClusterDriver } from '../domain/cluster-driver.ts';
import { type Decision, RESERVING_ACTIONS } from '../domain/decision.ts';
import { scopeSegments } from '../domain/scope-names.ts';
import type { ModelMemory } from '../domain/snapshot.ts';
import { admitStart } from '../placement/admit-start.ts';
import { reserve } from '../placement/reserve.ts';
import { BACKOFF_CAP_MS, backedOffUntil } from '../policy/backoff.ts';
import { looksAgainAfter } from '../policy/burst.ts';
import { refusedDecision } from '../policy/decide.ts';
import { victimPhrase } from '../policy/explain.ts';
import { decidePass } from '../policy/pass.ts';
import { buildView, type View } from '../policy/view.ts';
import { sharedReading } from '../shared-reading.ts';
import type { Sql } from '../store/db.ts';
import { guarded } from '../store/db.ts';
import { recordDecisions } from '../store/decisions.ts';
import { removeModel } from '../store/models.ts';
import { applyReplicaReport, type ReplicaReport } from '../store/replica-reports.ts';
import { getReplica, listReplicas, recentOutcomes, transition } from '../store/replicas.ts';
import { type LiveReading, type QuotaPolicy, readLiveReading } from '../store/snapshot.ts';
import type { PolicyCache } from './policy-cache.ts';

export interface ActivityDeps {
  sql: Sql;
  driver: ClusterDriver;
  policyCache: PolicyCache;
  config: Pick<Config, 'policy' | 'resyncMs'>;
  now?: () => number;
  /** Called with every decision planned, and how long its pass took (metrics). */
  onDecision?: (decision: Decision, passSeconds: number) => void;
  /** Called when a replica of an agent's node moved (ready, failed, stopped): its reconcilers are told. */
  onReplicaSettled?: (model: string, node: string, state: ReplicaState) => Promise<void>;
  /** Called when a reclaim or preemption was reserved: its victims drain (metrics). */
  onVictims?: (decision: Decision) => void;
  /** Builds the views passes plan on (policy/view.ts buildView; tests count its calls). */
  buildView?: typeof buildView;
}

/** A decision of a burst, and the ID of the replica it reserves. */
export interface Reserved {
  decision: Decision;
  replicaId: string;
}

export interface PassPlan {
  exists: true;
  deleting: boolean;
  /** The owner's scope key; '' for none (as the search attribute holds it). */
  owner: string;
  /** The owner as people name it (`Acme/ml`); '' for none. */
  ownerPath: string;
  decision: Decision;
  /** The places that follow a place in the same pass (policy/burst.ts); empty when there are none. */
  alsoPlace: Decision[];
  /** Replicas drained with a removal's own (policy/burst.ts moreRemovals); empty when there are none. */
  alsoRemove: string[];
  /** Reserved (pending) replicas of the model: each starts once its node admits it (startReplica). */
  startable: string[];
  backedOffUntil: Record<string, number>;
  resyncMs: number;
}

/** The longest a resync pass's view of the live state may be shared (shorter with a short resync period). */
const LIVE_STATE_MAX_AGE_MS = 5_000;

/** The reconciler's activities. Each one is idempotent: Temporal may run it again after a failure. */
export function createActivities(deps: ActivityDeps) {
  const { sql, driver, config } = deps;
  const now = deps.now ?? Date.now;
  const build = deps.buildView ?? buildView;

  // The worker's passes share one read of the live state at a time, and the view built on it: resyncs
  // for a few seconds, so idle models cost the store a read per worker, not one each; passes woken by a
  // change, the next read begun after it. Each read keeps the models of the one before while none changed.
  let lastReading: LiveReading | undefined;
  const liveState = sharedReading(
    async () => {
      const at = now();
      lastReading = await readLiveReading(sql, at, config.policy, lastReading);
      return { at, reading: lastReading };
    },
    Math.min(LIVE_STATE_MAX_AGE_MS, config.resyncMs / 2),
    now,
  );
  let built: { policy: QuotaPolicy; live: Awaited<ReturnType<typeof liveState>>; view: View } | null = null;
  /** The view of the store as it was at `freshAfter` or later (a pass woken by a change asks for now). */
  const viewNow = async (policyChangedAt: number | undefined, freshAfter: number): Promise<View> => {
    const [policy, live] = await Promise.all([deps.policyCache.get(policyChangedAt), liveState(freshAfter)]);
    if (built?.policy !== policy || built.live !== live) {
      built = {
        policy,
        live,
        view: build({ now: live.at, settings: config.policy, ...policy, ...live.reading.state }),
      };
    }
    return built.view;
  };

  /**
   * Marks replicas draining and has the driver drain every one that is: a retry after the driver failed
   * drains again the replicas an earlier attempt already marked.
   */
  const drain = async (replicaIds: readonly string[], reason: string) => {
    for (const id of replicaIds) {
      await transition(sql, id, ['pending', 'starting', 'ready'], 'draining', reason);
      const replica = await getReplica(sql, id);
      if (replica?.state === 'draining') await driver.drain(replica);
    }
  };

  return {
    /**
     * Reads the state (the quota policy from the cache; the live state as it was at `freshAfter` or
     * later, now when not given) and decides one step for the model.
     */
    async planPass(input: {
      model: string;
      memory: ModelMemory;
      policyChangedAt?: number;
      freshAfter?: number;
    }): Promise<PassPlan | { exists: false }> {
      return guarded(async () => {
        const started = performance.now();
        const view = await viewNow(input.policyChangedAt, input.freshAfter ?? now());
        const model = view.models.get(input.model);
        if (!model) return { exists: false as const };
        const backoff = backedOffUntil(await recentOutcomes(sql, model.name, BACKOFF_CAP_MS * 2));
        const { decision, alsoPlace, alsoRemove, startable, resyncMs } = decidePass(
          view,
          model.name,
          { ...input.memory, backedOffUntil: backoff },
          config.resyncMs,
        );
        const seconds = (performance.now() - started) / 1000;
        for (const planned of [decision, ...alsoPlace]) deps.onDecision?.(planned, seconds);
        return {
          exists: true as const,
          deleting: model.deleting ?? false,
          owner: model.owner ?? '',
          ownerPath: model.owner ? scopeSegments(view.scopes, model.owner).join('/') : '',
          decision,
          alsoPlace,
          alsoRemove,
          startable,
          backedOffUntil: backoff,
          resyncMs,
        };
      });
    },

    /**
     * Commits a pass's burst in one transaction: a place, reclaim or preempt decision, and the places
     * that follow it (`also`), or the burst the model makes on the state under the lock when that state
     * refuses it. Then `decision` is the first reserved and `also` the rest (what was reserved of
     * `also`; empty without it). `lookAgain` says whether the reconciler plans again at once
     * (policy/burst.ts looksAgainAfter). A refusal is a normal answer, with the decision to record.
     * One shape: every field, always (docs/architecture.md "Retiring history compatibility").
     */
    async reserveReplica(input: {
      decision: Decision;
      replicaId: string;
      also?: Reserved[];
    }): Promise<
      | { reserved: true; decision: Decision; also: Reserved[]; at: number; lookAgain: boolean }
      | { reserved: false; why: string; decision: Decision }
    > {
      if (!RESERVING_ACTIONS.includes(input.decision.action)) {
        throw ApplicationFailure.nonRetryable(
          `cannot reserve for a ${input.decision.action} decision`,
          'BadInput',
        );
      }
      const also = input.also ?? [];
      const planned = [input.decision, ...also.map((step) => step.decision)];
      const ids = [input.replicaId, ...also.map((step) => step.replicaId)];
      // The view the pass planned on: checked on again under the lock when nothing it holds changed.
      const earlier = built
        ? { reading: built.live.reading, measurements: built.policy.measurements, view: built.view }
        : undefined;
      const reservation = await guarded(() =>
        reserve(sql, planned, ids, config.policy, now(), earlier, build),
      );
      if (!reservation.reserved) {
        const why = reservation.why;
        return {
          reserved: false,
          why,
          decision: reservation.decision ?? refusedDecision(input.decision, why),
        };
      }
      const [first, ...rest] = reservation.decisions ?? planned;
      if (first.victims?.length) deps.onVictims?.(first);
      for (const victim of first.victims ?? []) {
        const replica = await getReplica(sql, victim.replica);
        if (replica?.state === 'draining') await driver.drain(replica);
      }
      return {
        reserved: true,
        // After the commit: a view read from then on holds what was reserved.
        at: now(),
        lookAgain: looksAgainAfter([first, ...rest]),
        decision: first,
        also: rest.map((decision, i) => ({ decision, replicaId: ids[i + 1] })),
      };
    },

    /**
     * Starts a reserved replica through the driver once its node admits it (what runs and what was
     * reserved before it leave it room); true when it is starting. Not yet is a normal answer: the
     * reconciler is woken when room frees on the node.
     */
    async startReplica(input: { replicaId: string }) {
      return guarded(async () => {
        const admission = await admitStart(sql, input.replicaId);
        if (admission.admitted) await driver.start(admission.replica);
        return admission.admitted;
      });
    },

    /** Drains replicas (scale-down); each stops after its grace period. */
    async drainReplicas(input: { replicaIds: string[]; reason: string }) {
      await guarded(() => drain(input.replicaIds, input.reason));
    },

    /** Drains every replica of a deleted model; removes the model once none holds room. True when gone. */
    async drainModel(input: { model: string }) {
      return guarded(async () => {
        const active = await listReplicas(sql, { model: input.model, activeOnly: true });
        await drain(
          active.map((replica) => replica.id),
          'the model was deleted',
        );
        return removeModel(sql, input.model);
      });
    },

    /**
     * Records what came of a start or a drain on an agent's node (workflows/replica-on-node.ts) or a
     * Kubernetes node (workflows/replica-on-kubernetes.ts), as an agent's report through the API would,
     * and tells the reconcilers it concerns. Idempotent.
     */
    async settleReplica(input: {
      replicaId: string;
      node: string;
      report: ReplicaReport;
      /** A Kubernetes replica's pod IP (workflows/replica-on-kubernetes.ts): where it serves. */
      podAddress?: string;
    }) {
      await guarded(async () => {
        const settled = await applyReplicaReport(
          sql,
          input.node,
          input.replicaId,
          input.report,
          input.podAddress,
        );
        if (settled?.moved) await deps.onReplicaSettled?.(settled.model, input.node, settled.state);
      });
    },

    /**
     * Records the decision, and those of the places that followed it in the pass (in one transaction);
     * a pass that changed nothing and says what the last one said is not repeated.
     */
    async recordDecision(input: {
      decision: Decision;
      replica?: string;
      skipIfUnchanged: boolean;
      also?: { decision: Decision; replica: string }[];
    }) {
      // A preemption's record names its victims, each with its owner: reading hides those of scopes the
      // reader does not see (api/decisions-shown.ts).
      const victims = input.decision.victims?.map((v) => ({ owner: v.owner, phrase: victimPhrase(v) }));
      await guarded(() =>
        recordDecisions(sql, input.decision, input.replica, input.skipIfUnchanged, input.also ?? [], victims),
      );
    },
  };
}
