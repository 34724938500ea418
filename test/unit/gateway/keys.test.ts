import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Identity } from '../../../src/contracts/permissions.ts';
import { GatewayKeys, KEY_CACHE_MS, KEY_REFRESH_MS, type KeyLookup } from '../../../src/gateway/keys.ts';

const client: Identity = { name: 'app', role: 'client', scope: null, models: null };
const BEARER = 'Bearer llmgw_secret';

/** A store whose reads the test answers one by one, on a clock the test moves. */
function store() {
  const clock = { now: 0 };
  const reads: { at: number; answer(identity: Identity | null): void; fail(): void }[] = [];
  const lookup: KeyLookup = (_secret, at) =>
    new Promise((resolve, reject) =>
      reads.push({
        at,
        answer: (identity) => resolve(identity ? { identity } : { refused: 'unknown' }),
        fail: () => reject(new Error('the store is down')),
      }),
    );
  const keys = new GatewayKeys(lookup, () => clock.now);
  // As a request awaits it: a refusal at once is a rejection too.
  const call = async () => keys.caller(BEARER, 'call-model');
  /** The key's first read, answered: its answer is kept from then on. */
  const known = async () => {
    const first = call();
    await settle();
    reads[0].answer(client);
    await first;
  };
  return { clock, reads, call, keys, known };
}

/** Lets the promises that are ready settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the gateway's key check", () => {
  it('reads the store once for the requests that come while a read of the key runs', async () => {
    const { reads, call } = store();
    const calls = Array.from({ length: 20 }, call);
    await settle();
    assert.equal(reads.length, 1);
    reads[0].answer(client);
    assert.deepEqual(await Promise.all(calls), Array(20).fill(client));
  });

  it('serves a key in steady use without waiting on the store: past half its time the answer is read again behind the request', async () => {
    const { clock, reads, call, known } = store();
    await known();
    clock.now = KEY_REFRESH_MS + 1;
    // This read is never answered: the request does not wait for it.
    assert.deepEqual(await call(), client);
    assert.equal(reads.length, 2);
    await call();
    assert.equal(reads.length, 2, 'one read ahead at a time');
  });

  it('answers a kept key at once, with no promise, and refuses a missing one at once', async () => {
    const { keys, known } = store();
    await known();
    assert.deepEqual(keys.caller(BEARER, 'call-model'), client);
    assert.throws(() => keys.caller(undefined, 'call-model'), /an API key is needed/);
  });

  it('stops a revoked key within KEY_CACHE_MS: the read ahead of time finds it gone', async () => {
    const { clock, reads, call, known } = store();
    await known();
    clock.now = KEY_REFRESH_MS;
    await call();
    reads[1].answer(null);
    await settle();
    await assert.rejects(call(), /this API key is unknown, was revoked or expired/);
  });

  it('waits on the store once the answer is KEY_CACHE_MS old, and a failed read ahead changed nothing', async () => {
    const { clock, reads, call, known } = store();
    await known();
    clock.now = KEY_REFRESH_MS;
    await call();
    reads[1].fail();
    await settle();
    clock.now = KEY_CACHE_MS;
    let served = false;
    const late = call().then((identity) => {
      served = true;
      return identity;
    });
    await settle();
    assert.equal(served, false, 'an expired answer is not served');
    assert.equal(reads.length, 3);
    reads[2].answer(client);
    assert.deepEqual(await late, client);
  });

  it('does not wait on a read that began KEY_CACHE_MS ago: it may hang on a dead connection', async () => {
    const { clock, reads, call } = store();
    const hung = call().then(
      () => 'served',
      (error: Error) => error.message,
    );
    await settle();
    clock.now = KEY_CACHE_MS;
    const next = call();
    await settle();
    assert.equal(reads.length, 2);
    reads[1].answer(client);
    assert.deepEqual(await next, client);
    // The hung read answering at last does not replace the newer answer.
    reads[0].answer(null);
    assert.match(await hung, /unknown, was revoked/, 'the request that waited on it gets its answer');
    assert.deepEqual(await call(), client);
  });
});
