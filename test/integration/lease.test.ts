// The sim-cluster lease over the real store: one holder at a time, a holder whose session is killed or
// cut off stops and another takes over within seconds, and no race lets two hold at once.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect, type Sql } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { LEASE_TIMINGS, Lease, type LeaseTimings } from '../../src/store/lease.ts';
import { LOCKS } from '../../src/store/locks.ts';
import { sharedServices, stopOwnServices } from '../support/services.ts';
import { createDatabase, eventually } from '../support/stack.ts';

/** Quick clocks, for the tests that take the lease over many times. */
const QUICK: LeaseTimings = { checkMs: 100, answerMs: 300, silenceMs: 1000 };

/**
 * Contenders for one lease whose holders share one record of who runs: a contender told it won while
 * another still runs is an overlap, the failure this file looks for.
 */
class Contest {
  readonly running = new Set<string>();
  readonly overlaps: string[] = [];
  readonly leases = new Map<string, Lease>();
  readonly events: { name: string; event: 'won' | 'lost'; at: number; reason?: string }[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly timings: LeaseTimings,
  ) {}

  start(name: string, pool: Sql = this.sql): Lease {
    const lease = new Lease(
      pool,
      'simCluster',
      {
        won: () => {
          if (this.running.size > 0) this.overlaps.push(`${name} won while ${[...this.running]} ran`);
          this.running.add(name);
          this.events.push({ name, event: 'won', at: performance.now() });
        },
        lost: (reason) => {
          this.running.delete(name);
          this.events.push({ name, event: 'lost', at: performance.now(), reason });
        },
      },
      { name, timings: this.timings },
    );
    this.leases.set(name, lease);
    return lease;
  }

  async stop(name: string) {
    await this.leases.get(name)?.stop();
    this.leases.delete(name);
  }

  async stopAll() {
    for (const name of [...this.leases.keys()]) await this.stop(name);
  }

  /** The one contender that holds, once one does. */
  holder(timeoutMs: number): Promise<string> {
    return eventually(
      'one holder',
      async () => (this.running.size === 1 ? [...this.running][0] : undefined),
      timeoutMs,
    );
  }

  /** When `name` was last told `event`. */
  last(name: string, event: 'won' | 'lost') {
    return this.events.filter((e) => e.name === name && e.event === event).at(-1);
  }
}

/** Who holds the sim-cluster lock in Postgres's view: the application_name of each session granted it. */
async function holdersInStore(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select a.application_name as name from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objid = ${LOCKS.simCluster} and l.objsubid = 1
      and l.database = (select oid from pg_database where datname = current_database())`;
  return rows.map((row) => row.name);
}

async function terminateSession(sql: Sql, name: string) {
  await sql`
    select pg_terminate_backend(pid) from pg_stat_activity
    where application_name = ${name} and datname = current_database()`;
}

/** A TCP relay to Postgres that can go silent, as a network that drops everything does. */
async function silenceableRelay(host: string, port: number) {
  let silent = false;
  const sockets: Socket[] = [];
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(port, host);
    sockets.push(client, upstream);
    client.on('data', (chunk) => silent || upstream.write(chunk));
    upstream.on('data', (chunk) => silent || client.write(chunk));
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ])
      a.on('close', () => silent || b.destroy()).on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    silence: () => {
      silent = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the sim-cluster lease', () => {
  let url: string;
  let sql: Sql;
  before(async () => {
    url = await createDatabase((await sharedServices()).databaseUrl, `lease_${newId()}`);
    sql = connect(url);
  });
  after(async () => {
    await sql.end({ timeout: 5 });
    await stopOwnServices();
  });

  it('two contenders: exactly one holds, in its own view and in Postgres', async () => {
    const contest = new Contest(sql, LEASE_TIMINGS);
    try {
      contest.start('llmgw lease-a');
      contest.start('llmgw lease-b');
      const holder = await contest.holder(5000);
      // Several more checks of both: nothing changes hands while the holder lives.
      await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_TIMINGS.checkMs));
      assert.deepEqual([...contest.running], [holder]);
      assert.deepEqual(
        [...contest.leases].filter(([, lease]) => lease.held).map(([name]) => name),
        [holder],
      );
      assert.deepEqual(await holdersInStore(sql), [holder]);
      assert.deepEqual(contest.overlaps, []);
    } finally {
      await contest.stopAll();
    }
    assert.deepEqual(await holdersInStore(sql), [], 'stopping gave the lease up');
  });

  it("the holder's session killed: it stops at once and the other takes over within 3 s", async () => {
    const contest = new Contest(sql, LEASE_TIMINGS);
    try {
      contest.start('llmgw lease-a');
      contest.start('llmgw lease-b');
      const first = await contest.holder(5000);
      const other = first === 'llmgw lease-a' ? 'llmgw lease-b' : 'llmgw lease-a';
      const killedAt = performance.now();
      await terminateSession(sql, first);
      await eventually('the other holds', async () => contest.running.has(other), 3000);
      const next = contest.last(other, 'won');
      const stopped = contest.last(first, 'lost');
      assert.ok(stopped && next, JSON.stringify(contest.events));
      assert.match(stopped.reason ?? '', /connection to the store closed/);
      const stoppedMs = stopped.at - killedAt;
      const takeoverMs = next.at - killedAt;
      console.log(
        `lease: holder stopped ${stoppedMs.toFixed(0)} ms, other took over ${takeoverMs.toFixed(0)} ms after the kill`,
      );
      assert.ok(stoppedMs < 500, `the holder stopped ${stoppedMs} ms after its session was killed`);
      assert.ok(takeoverMs < 3000, `taken over ${takeoverMs} ms after the kill`);
      assert.deepEqual(await holdersInStore(sql), [other]);
      assert.deepEqual(contest.overlaps, []);
    } finally {
      await contest.stopAll();
    }
  });

  it('a holder cut off from the store stops before Postgres frees the lease for another', async () => {
    const [host] = sql.options.host;
    const relay = await silenceableRelay(host, sql.options.port[0]);
    const relayed = new URL(url);
    relayed.port = String(relay.port);
    const cutOff = connect(relayed.toString());
    const contest = new Contest(sql, QUICK);
    try {
      contest.start('llmgw lease-far', cutOff);
      assert.equal(await contest.holder(3000), 'llmgw lease-far');
      contest.start('llmgw lease-near');
      await new Promise((resolve) => setTimeout(resolve, 5 * QUICK.checkMs));
      assert.deepEqual([...contest.running], ['llmgw lease-far']);

      const silentAt = performance.now();
      relay.silence();
      await eventually('the other holds', async () => contest.running.has('llmgw lease-near'), 5000);
      const stopped = contest.last('llmgw lease-far', 'lost');
      const next = contest.last('llmgw lease-near', 'won');
      assert.ok(stopped && next, JSON.stringify(contest.events));
      assert.match(stopped.reason ?? '', /did not answer/);
      assert.ok(stopped.at < next.at, 'the cut-off holder stopped first');
      assert.ok(stopped.at - silentAt <= QUICK.checkMs + QUICK.answerMs + 200);
      assert.ok(
        next.at - silentAt >= QUICK.silenceMs - QUICK.checkMs,
        'Postgres kept the lease until the session went silent',
      );
      assert.deepEqual(contest.overlaps, []);
    } finally {
      await contest.stopAll();
      await relay.close();
      await cutOff.end({ timeout: 0 });
    }
  });

  it('repeated races and faults never let two hold at once, and always leave one holding', async () => {
    const contest = new Contest(sql, QUICK);
    let seed = 18;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    let next = 0;
    const newcomer = () => contest.start(`llmgw racer-${next++}`);
    try {
      for (let round = 0; round < 24; round++) {
        if (round % 6 === 0) {
          // All start at the same moment.
          await contest.stopAll();
          for (let i = 0; i < 4; i++) newcomer();
        }
        const holder = await contest.holder(3000);
        const names = [...contest.leases.keys()];
        const fault = random(3);
        if (fault === 0) {
          await terminateSession(sql, holder);
          await eventually('the killed holder stops', async () => !contest.running.has(holder), 1000);
        } else if (fault === 1) {
          await contest.stop(holder);
          newcomer();
        } else await terminateSession(sql, names[random(names.length)]);
        assert.deepEqual(contest.overlaps, [], `round ${round}`);
      }
      const holder = await contest.holder(3000);
      assert.deepEqual(await holdersInStore(sql), [holder]);
    } finally {
      await contest.stopAll();
    }
    assert.deepEqual(contest.overlaps, []);
    assert.ok(contest.events.filter((e) => e.event === 'won').length >= 12, 'the lease changed hands often');
  });
});
