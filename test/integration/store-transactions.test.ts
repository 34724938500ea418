// transaction() is sql.begin of postgres.js 3.4.9 as patches/postgres+3.4.9.patch mends it. Each test here
// fails on the unpatched driver, which fails a transaction whose BEGIN fills a connection's pipeline with
// UNSAFE_TRANSACTION (porsager/postgres#1189), crashes the process when a transaction's connection is lost,
// and then fails the first query of that pool slot with the lost backend's error.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { connect, isConnectionError, type Sql, type Tx, transaction } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { lockUntilCommit } from '../../src/store/locks.ts';
import { type Services, sharedServices } from '../support/services.ts';
import { createDatabase, eventually } from '../support/stack.ts';

const POOL = 2;
const TRANSACTIONS = 30;

/**
 * Opens both connections, then sends enough plain queries to leave each pipeline one short of full,
 * starts the transactions right behind them, and more plain queries behind those. sql.begin sends its
 * BEGIN in that order, so that one of them is the query that fills a pipeline.
 */
async function storm<T>(sql: Sql, start: (i: number) => Promise<T>) {
  await Promise.all(Array.from({ length: POOL }, () => sql`select pg_sleep(0.05)`));
  // How many queries postgres.js sends on a connection before their answers (an option its types omit).
  const pipeline = (sql.options as unknown as { max_pipeline: number }).max_pipeline;
  // Without parameters a query is pipelined at once (a new one with parameters waits for its description).
  const plain = () => Array.from({ length: POOL * pipeline }, () => sql`select 1 as plain`.execute());
  const ahead = plain();
  const transactions = Promise.allSettled(Array.from({ length: TRANSACTIONS }, (_, i) => start(i)));
  const behind = plain();
  await Promise.all([...ahead, ...behind]);
  return transactions;
}

const withApplicationName = (url: string, name: string) => {
  const named = new URL(url);
  named.searchParams.set('application_name', name);
  return named.toString();
};

const rejections = (results: PromiseSettledResult<unknown>[]) =>
  results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));

/** `promise`, or a failure naming `what` once `ms` have passed. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Records the errors that escape to the process (each would crash it), until stop(). */
function recordEscapedErrors() {
  const errors: unknown[] = [];
  const record = (error: unknown) => errors.push(error);
  process.on('uncaughtException', record).on('unhandledRejection', record);
  const stop = () => process.off('uncaughtException', record).off('unhandledRejection', record);
  return { errors, stop };
}

describe('store transactions', () => {
  let services: Services;
  let url: string;
  before(async () => {
    services = await sharedServices();
    url = await createDatabase(services.databaseUrl, `tx_${newId()}`);
    const sql = connect(url, { max: 1 });
    await sql`create table writes (tx int, part text, primary key (tx, part))`;
    await sql.end();
  });
  after(() => services.stop());

  it("a BEGIN that fills its connection's pipeline reserves that connection (the patch of #1189)", async () => {
    // With a pipeline of 0 every BEGIN fills it: unpatched, each of these fails with UNSAFE_TRANSACTION.
    const unpipelined = { max: POOL, max_pipeline: 0, onnotice: () => {} };
    const sql = postgres(url, unpipelined);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        transaction(sql, async (tx) => (await tx`select ${i}::int as i, pg_sleep(0.01)`)[0].i),
      ),
    );
    assert.deepEqual(rejections(results), []);
    await sql.end();
  });

  it('transaction() survives a storm of full pipelines: each commits or rolls back whole, a savepoint only its part', async () => {
    const application = `storm_${newId()}`;
    const sql = connect(withApplicationName(url, application), { max: POOL });
    const results = await storm(sql, (i) =>
      transaction(sql, async (tx) => {
        await lockUntilCommit(tx, 'reservations', `storm-${i}`);
        await tx`insert into writes (tx, part) values (${i}, 'outer')`;
        await transaction(
          tx,
          (inner) => inner`insert into writes (tx, part) values (${i}, 'kept savepoint')`,
        );
        // A failed statement aborts the transaction: rolling back to the savepoint must recover it.
        const undone = transaction(tx, async (inner) => {
          await inner`insert into writes (tx, part) values (${i}, 'undone savepoint')`;
          await inner`insert into writes (tx, part) values (${i}, 'outer')`;
        });
        await assert.rejects(undone, { code: '23505' });
        await tx`select 1 from writes where tx = ${i}`;
        if (i % 3 === 0) throw new Error(`transaction ${i} rolls back`);
      }),
    );

    const unexpected = rejections(results).filter((error) => !/rolls back/.test(error.message));
    assert.deepEqual(unexpected, [], 'only the transactions that throw fail');
    assert.equal(rejections(results).length, Math.ceil(TRANSACTIONS / 3));
    const rows = await sql`select tx, part from writes order by tx, part`;
    const expected = Array.from({ length: TRANSACTIONS }, (_, i) => i)
      .filter((i) => i % 3 !== 0)
      .flatMap((tx) => [
        { tx, part: 'kept savepoint' },
        { tx, part: 'outer' },
      ]);
    assert.deepEqual([...rows], expected);

    const [{ locks }] = await sql`
      select count(*)::int as locks from pg_locks
      where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`;
    assert.equal(locks, 0, 'commit and rollback released the advisory locks');
    await assertPoolWhole(sql, application);
    await sql`delete from writes`;
    await sql.end();
  });

  it('after every backend is killed mid-transaction, the same pool serves at once and nothing lost was committed', async (t) => {
    const sql = connect(url, { max: 2 * POOL });
    const admin = connect(url, { max: 1 });
    const write = (tx: Tx, i: number, part: string) =>
      tx`insert into writes (tx, part) values (${i}, ${part})`;
    const escaped = recordEscapedErrors();
    try {
      // A fresh pool gives each of these a connection of its own; the kill interrupts them. (A query is sent
      // when awaited or executed; each outcome is awaited at once, for a failure to be handled.)
      const interrupted = Array.from({ length: POOL }, (_, i) => [
        transaction(sql, async (tx) => {
          await write(tx, i, 'during kill');
          await tx`select pg_sleep(30)`;
        }),
        sql`select pg_sleep(30)`.execute(),
      ]).flat();
      const interruptedOutcomes = Promise.allSettled(interrupted);
      await eventually('every connection of the pool in its query', async () => {
        const [{ sleeping }] = await admin`
          select count(*)::int as sleeping from pg_stat_activity
          where datname = current_database() and wait_event = 'PgSleep'`;
        return sleeping === 2 * POOL;
      });
      // These wait for a connection when the kill comes.
      const waiting = Array.from({ length: POOL }, (_, i) => [
        transaction(sql, (tx) => write(tx, POOL + i, 'during kill')),
        sql`select 1`.execute(),
      ]).flat();
      const waitingOutcomes = Promise.allSettled(waiting);
      const killed = await admin`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`;
      assert.ok(killed.length >= 2 * POOL, `${killed.length} backends killed`);

      const during = [...(await interruptedOutcomes), ...(await waitingOutcomes)];
      const failures = rejections(during);
      assert.ok(
        failures.every((error) => isConnectionError(error)),
        `the kill failed work with ${failures.map((error) => error.code ?? error.message)}`,
      );
      assert.equal(
        failures.length,
        interrupted.length,
        'the work it interrupted failed, the waiting work ran',
      );
      const [{ lost }] = await admin`select count(*)::int as lost from writes where tx < ${POOL}`;
      assert.equal(lost, 0, 'the interrupted transactions committed nothing');

      const started = performance.now();
      const afterKill = await within(
        5000,
        '20 transactions and 20 queries after the kill',
        Promise.allSettled([
          ...Array.from({ length: 20 }, (_, i) => transaction(sql, (tx) => write(tx, 100 + i, 'after kill'))),
          ...Array.from({ length: 20 }, () => sql`select 1 as alive`),
        ]),
      );
      t.diagnostic(
        `40 calls through the pool took ${Math.round(performance.now() - started)} ms after the kill`,
      );
      assert.deepEqual(rejections(afterKill), []);
      const [{ written }] =
        await admin`select count(*)::int as written from writes where part = 'after kill'`;
      assert.equal(written, 20);
    } finally {
      escaped.stop();
    }
    assert.deepEqual(escaped.errors, [], 'no error escaped to the process');
    await admin`delete from writes`;
    // Unpatched, end() waits forever for the query of a lost backend.
    await within(5000, 'sql.end()', Promise.all([sql.end(), admin.end()]));
  });

  /** Every connection of the pool can still be had, and no more than the pool's are open. */
  async function assertPoolWhole(sql: Sql, application: string) {
    const holders = Array.from({ length: POOL }, () =>
      transaction(sql, async (tx) => (await tx`select pg_backend_pid() as pid, pg_sleep(0.2)`)[0].pid),
    );
    const pids = await within(5000, 'holding every connection (one leaked?)', Promise.all(holders));
    assert.equal(new Set(pids).size, POOL, `${POOL} transactions at once ran on ${POOL} connections`);
    const [{ connections }] = await sql`
      select count(*)::int as connections from pg_stat_activity where application_name = ${application}`;
    assert.ok(connections <= POOL, `${connections} connections open for a pool of ${POOL}`);
  }
});
