// Stand-ins for the reconciler's activities: each call is kept (with the test server's time when it
// came), and each test scripts the answers it needs.
import type { PassPlan } from '../../../src/activities/index.ts';
import type { Activities } from '../../../src/activities/types.ts';
import type { Decision } from '../../../src/domain/decision.ts';
import { decision } from '../../support/decisions.ts';

export const MINUTE_MS = 60_000;

type Input<K extends keyof Activities> = Parameters<Activities[K]>[0];
/** Every call of each activity: its input, and when it came in the test server's (skipped) time. */
export type Calls = { [K in keyof Activities]: (Input<K> & { at: number })[] };

/** A pass's plan around `planned`, resyncing in an hour unless `fields` say otherwise. */
export function plan(planned: Decision, fields: Partial<PassPlan> = {}): PassPlan {
  return {
    exists: true,
    deleting: false,
    owner: '',
    ownerPath: '',
    decision: planned,
    alsoPlace: [],
    alsoRemove: [],
    startable: [],
    backedOffUntil: {},
    resyncMs: 60 * MINUTE_MS,
    ...fields,
  };
}

/**
 * Activities for one worker that answer as the running test says: `answer(answers)` starts a new set of
 * calls, answered by `answers`, else as a model with nothing to do (planned steady, every reservation
 * granted, every start admitted, every deleted model gone at once). `now` is the test server's clock.
 */
export function fakeActivities(now: () => Promise<number>) {
  const defaults: Activities = {
    planPass: async ({ model }) => plan(decision(model)),
    reserveReplica: async ({ decision, also }) => ({
      reserved: true,
      decision,
      also: also ?? [],
      at: 0,
      lookAgain: true,
    }),
    startReplica: async () => true,
    drainReplicas: async () => {},
    drainModel: async () => true,
    recordDecision: async () => {},
    settleReplica: async () => {},
  };
  const names = Object.keys(defaults) as (keyof Activities)[];
  let answers: Partial<Activities> = {};
  let calls = {} as Calls;
  const activities = Object.fromEntries(
    names.map((name) => [
      name,
      async (input: object) => {
        (calls[name] as object[]).push({ ...input, at: await now() });
        return ((answers[name] ?? defaults[name]) as (input: object) => Promise<unknown>)(input);
      },
    ]),
  ) as unknown as Activities;
  return {
    activities,
    answer(given: Partial<Activities>): Calls {
      answers = given;
      calls = Object.fromEntries(names.map((name) => [name, []])) as unknown as Calls;
      return calls;
    },
  };
}

/** A promise the test resolves: an activity waits on it to hold a pass where the test wants it. */
export function gate() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const arrived = new Promise<void>((resolve) => {
    reached = resolve;
  });
  return {
    /** Resolves once an activity waits at the gate. */
    arrived,
    open,
    /** Called by the activity: waits until the test opens it. */
    async pass() {
      reached();
      await opened;
    },
  };
}
