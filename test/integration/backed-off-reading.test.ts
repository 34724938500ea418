// What the other models see of a model's failed starts (store/replicas.ts recentStartOutcomes, policy/
// backoff.ts backedOffOf): the live reading carries every failing model's recent start outcomes, and the
// policy derives the profiles still backed off from them, so that nobody yields a limit's room to a
// model that cannot take it (docs/policy.md "Fair shares from the first placement").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ReplicaState } from '../../src/domain/cluster.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../src/domain/snapshot.ts';
import { BACKOFF_FIRST_MS, backedOffOf } from '../../src/policy/backoff.ts';
import type { Sql } from '../../src/store/db.ts';
import { readLiveReading, readSnapshot } from '../../src/store/snapshot.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore } from '../support/stack.ts';

describe('the profiles backed off, as the live reading carries them', () => {
  let sql: Sql;
  let n = 0;
  /** A replica of the model's profile that reached `state` `agoMs` before the store's now. */
  const replica = (model: string, profile: string, state: ReplicaState, agoMs: number) => sql`
    insert into replicas (id, model, profile, node, resources, state, updated_at)
    values (${`r${n++}`}, ${model}, ${profile}, 'n1', ${sql.json({ gpus: 1 })}, ${state},
            now() - ${agoMs} * interval '1 millisecond')`;

  before(async () => {
    sql = await freshStore();
    await replica('failing', 'p', 'failed', 3_000);
    await replica('failing', 'p', 'failed', 1_000); // two in a row: backed off for 10 s from the newer
    await replica('failing', 'q', 'failed', 60_000); // failed, and its backoff has run out
    await replica('recovered', 'p', 'failed', 3_000);
    await replica('recovered', 'p', 'ready', 1_000); // a start since ends the run
    await replica('long-ago', 'p', 'failed', 3_600_000); // outside the window the store reads
    await replica('serving', 'p', 'ready', 1_000);
    await replica('lost', 'p', 'lost', 1_000); // says nothing of how its profile starts
  });
  after(async () => {
    await sql.end();
    await stopOwnServices();
  });

  it('names only the profiles still backed off, until when', async () => {
    const now = Date.now();
    const snapshot = await readSnapshot(sql, now, DEFAULT_POLICY_SETTINGS);
    assert.deepEqual(
      Object.keys(snapshot.startOutcomes ?? {}).sort(),
      ['failing', 'recovered'],
      'only models with a failure in the window are read',
    );
    assert.ok(
      Object.values(snapshot.startOutcomes ?? {}).every((outcomes) =>
        outcomes.every((o) => o.state !== 'lost'),
      ),
    );
    assert.deepEqual(backedOffOf(snapshot, 'recovered'), {});
    const backedOff = backedOffOf(snapshot, 'failing');
    assert.deepEqual(Object.keys(backedOff), ['p']);
    const [{ at }] = await sql<{ at: Date }[]>`select updated_at as at from replicas where id = 'r1'`;
    assert.equal(backedOff.p, at.getTime() + 2 * BACKOFF_FIRST_MS);
  });

  it('a worker reading brought up to date carries it too', async () => {
    const first = await readLiveReading(sql, Date.now(), DEFAULT_POLICY_SETTINGS);
    await replica('failing', 'p', 'ready', 0);
    const next = await readLiveReading(sql, Date.now(), DEFAULT_POLICY_SETTINGS, first);
    const backedOff = (reading: typeof first) =>
      backedOffOf({ ...reading.state, now: Date.now() } as Parameters<typeof backedOffOf>[0], 'failing');
    assert.deepEqual(Object.keys(backedOff(first)), ['p']);
    assert.deepEqual(backedOff(next), {}, 'a start of the profile ends its run of failures');
  });
});
