// Model-based test of the worker's incremental reading of the active replicas (store/replicas.ts
// readActiveReplicas): replicas are reserved, moved, deleted, and written in a transaction held open
// across reads, then committed or rolled back, in any order. After each read, the reading brought up to
// date must be exactly what a read of every active replica returns at that moment.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ACTIVE_STATES, type ReplicaState } from '../../src/domain/cluster.ts';
import type { Sql } from '../../src/store/db.ts';
import { type ActiveReplicas, activeReplicasAfter, readActiveReplicas } from '../../src/store/replicas.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore } from '../support/stack.ts';

const RUNS = Number(process.env.LLMGW_READING_RUNS ?? 40);
const STATES: ReplicaState[] = [
  'pending',
  'starting',
  'ready',
  'draining',
  'stopped',
  'failed',
  'crashed',
  'lost',
];

interface Real {
  sql: Sql;
  reading?: ActiveReplicas;
  /** A transaction left open, on a connection of its own. */
  held?: Awaited<ReturnType<Sql['reserve']>>;
  /**
   * The held transaction reserved a replica. Replicas are reserved under the reservation lock, one
   * transaction at a time (so seq order is commit order): no other is reserved until it ends.
   */
  heldReserves: boolean;
  /** Each replica's state as committed, and as the held transaction would commit it. */
  states: Map<string, ReplicaState>;
  heldStates: Map<string, ReplicaState>;
  next: number;
}
type Model = Record<string, never>;

/**
 * An active replica no open transaction holds, by `pick`; undefined when there is none. A replica that
 * stopped, failed or was lost never runs again, in the store as here.
 */
const free = (real: Real, pick: number) => {
  const ids = [...real.states]
    .filter(([id, state]) => ACTIVE_STATES.includes(state) && !real.heldStates.has(id))
    .map(([id]) => id);
  return ids.length > 0 ? ids[pick % ids.length] : undefined;
};

const insert = (db: Sql | NonNullable<Real['held']>, id: string, state: ReplicaState) => db`
  insert into replicas (id, model, profile, node, resources, state)
  values (${id}, 'm', 'p', 'n1', ${db.json({ gpus: 1 })}, ${state})`;
const move = (db: Sql | NonNullable<Real['held']>, id: string, state: ReplicaState) =>
  db`update replicas set state = ${state}, updated_at = now() where id = ${id}`;

class Reserve implements fc.AsyncCommand<Model, Real> {
  constructor(readonly state: ReplicaState) {}
  check = () => true;
  async run(_: Model, real: Real) {
    if (real.heldReserves) return;
    const id = `r${real.next++}`;
    await insert(real.sql, id, this.state);
    real.states.set(id, this.state);
  }
  toString = () => `reserve(${this.state})`;
}
class Move implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly state: ReplicaState,
  ) {}
  check = () => true;
  async run(_: Model, real: Real) {
    const id = free(real, this.pick);
    if (!id) return;
    await move(real.sql, id, this.state);
    real.states.set(id, this.state);
  }
  toString = () => `move(#${this.pick}, ${this.state})`;
}
class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(_: Model, real: Real) {
    const id = free(real, this.pick);
    if (!id) return;
    await real.sql`delete from replicas where id = ${id}`;
    real.states.delete(id);
  }
  toString = () => `delete(#${this.pick})`;
}
/** Opens a transaction that moves a replica and perhaps reserves one, and leaves it open across what follows. */
class Hold implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly pick: number,
    readonly state: ReplicaState,
  ) {}
  check = () => true;
  async run(_: Model, real: Real) {
    if (real.held) return;
    real.held = await real.sql.reserve();
    await real.held`begin`;
    const moved = free(real, this.pick);
    if (moved) {
      await move(real.held, moved, this.state);
      real.heldStates.set(moved, this.state);
    }
    if (this.pick % 2 === 1) {
      const id = `r${real.next++}`;
      await insert(real.held, id, this.state);
      real.heldStates.set(id, this.state);
      real.heldReserves = true;
    }
  }
  toString = () => `hold(#${this.pick}, ${this.state})`;
}
class Release implements fc.AsyncCommand<Model, Real> {
  constructor(readonly commit: boolean) {}
  check = () => true;
  async run(_: Model, real: Real) {
    if (!real.held) return;
    await (this.commit ? real.held`commit` : real.held`rollback`);
    real.held.release();
    real.held = undefined;
    if (this.commit) for (const [id, state] of real.heldStates) real.states.set(id, state);
    real.heldStates = new Map();
    real.heldReserves = false;
  }
  toString = () => (this.commit ? 'commit' : 'rollback');
}
class Read implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(_: Model, real: Real) {
    real.reading = await readActiveReplicas(real.sql, real.reading);
    const all = await activeReplicasAfter(real.sql);
    assert.deepEqual(
      [...real.reading.byId.values()].map((r) => `${r.id}:${r.state}`),
      all.replicas.map((r) => `${r.id}:${r.state}`),
      'the reading brought up to date is every active replica, in reservation order',
    );
    assert.ok(real.reading.lastSeq >= all.lastSeq, 'it has seen every replica reserved up to its last seq');
  }
  toString = () => 'read';
}

describe('the incremental reading of the active replicas', () => {
  let sql: Sql;
  before(async () => {
    sql = await freshStore();
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await stopOwnServices();
  });

  /** Reads on from `reading` and checks it against a whole read; the reading brought up to date. */
  const readOn = async (reading: ActiveReplicas | undefined, why: string) => {
    const next = await readActiveReplicas(sql, reading);
    const all = await activeReplicasAfter(sql);
    assert.deepEqual(
      [...next.byId.values()].map((r) => `${r.id}:${r.state}`),
      all.replicas.map((r) => `${r.id}:${r.state}`),
      why,
    );
    return next;
  };

  it('sees a write of a transaction that began before a read and committed after it, behind a later one', async () => {
    await sql`truncate replicas`;
    await insert(sql, 'early', 'pending');
    let reading = await readOn(undefined, 'the first read is every active replica');
    const held = await sql.reserve();
    try {
      await held`begin`;
      await move(held, 'early', 'ready');
      // A later transaction commits first: the latest one committed is no longer the held one.
      await insert(sql, 'later', 'stopped');
      reading = await readOn(reading, 'the held move is not seen yet');
      await held`commit`;
    } finally {
      held.release();
    }
    await readOn(reading, 'the held move is seen once committed');
  });

  it('reads them all again when rows were deleted', async () => {
    await sql`truncate replicas`;
    await insert(sql, 'gone', 'ready');
    const reading = await readOn(undefined, 'the first read is every active replica');
    await sql`truncate replicas`;
    await readOn(reading, 'a truncated replica is not kept');
  });

  it('is what a whole read returns, whatever is written, held open, committed or rolled back between reads', async () => {
    const state = fc.constantFrom(...STATES);
    const pick = fc.nat(50);
    const commands = [
      state.map((s) => new Reserve(s)),
      fc.tuple(pick, state).map(([p, s]) => new Move(p, s)),
      pick.map((p) => new Delete(p)),
      fc.tuple(pick, state).map(([p, s]) => new Hold(p, s)),
      fc.boolean().map((commit) => new Release(commit)),
      fc.constant(new Read()),
      fc.constant(new Read()),
    ];
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        await sql`truncate replicas`;
        const real: Real = { sql, states: new Map(), heldStates: new Map(), heldReserves: false, next: 0 };
        try {
          await fc.asyncModelRun(() => ({ model: {}, real }), [...cmds, new Release(true), new Read()]);
        } finally {
          if (real.held) {
            await real.held`rollback`;
            real.held.release();
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});
