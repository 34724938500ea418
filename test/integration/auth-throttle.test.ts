// Failed authentications slowed per source address (issue 30, LOW: 200 wrong tokens in 3.7 s got 401
// each): past LLMGW_AUTH_FAILURE_BURST, 429 with Retry-After, before any token is looked at.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FailureThrottle } from '../../src/auth/failure-throttle.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('failed authentications, through the API', () => {
  let stack: Stack;
  const BURST = 5;
  before(async () => {
    stack = await startStack({ env: { LLMGW_AUTH_FAILURE_BURST: String(BURST) } });
  });
  after(() => stack.stop());

  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  it('answers 401 up to the burst, then 429 with Retry-After, even to a valid token, until a try refills', async () => {
    const valid = await stack.token({ name: 'good', role: 'viewer' });
    assert.equal((await stack.call('GET', '/api/v1/orgs', undefined, as(valid))).status, 200);
    for (let i = 0; i < BURST; i++) {
      assert.equal(
        (await stack.call('GET', '/api/v1/orgs', undefined, as(`wrong-${i}`))).status,
        401,
        `try ${i + 1}`,
      );
    }
    const response = await fetch(`${stack.url}/api/v1/orgs`, { headers: as('wrong-again') });
    assert.equal(response.status, 429);
    const wait = Number(response.headers.get('retry-after'));
    assert.ok(wait >= 1 && wait <= 1, `Retry-After ${response.headers.get('retry-after')}`);
    assert.match(
      (await response.json()).error,
      /^too many failed authentications from \S+; try again in 1 s$/,
    );
    // Nothing tells a guess apart meanwhile: a valid token waits too.
    assert.equal((await stack.call('GET', '/api/v1/orgs', undefined, as(valid))).status, 429);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 100));
    assert.equal((await stack.call('GET', '/api/v1/orgs', undefined, as(valid))).status, 200);
  });
});

describe('FailureThrottle', () => {
  it('lets `burst` failures through at once, then one a second', () => {
    const throttle = new FailureThrottle(3);
    for (let i = 0; i < 3; i++) {
      assert.equal(throttle.waitS('a', 0), 0);
      throttle.failed('a', 0);
    }
    assert.equal(throttle.waitS('a', 0), 1);
    assert.equal(throttle.waitS('b', 0), 0, 'another address is not slowed');
    assert.equal(throttle.waitS('a', 1000), 0, 'a second refills one try');
    throttle.failed('a', 1000);
    assert.equal(throttle.waitS('a', 1500), 1);
  });

  it('stays bounded: past maxKeys it forgets full buckets, and holds no new address while none is', () => {
    const throttle = new FailureThrottle(2, 1, 2);
    throttle.failed('a', 0);
    throttle.failed('b', 0);
    throttle.failed('c', 0);
    assert.equal(throttle.waitS('c', 0), 0, 'c had no room: not tracked');
    throttle.failed('a', 0);
    assert.equal(throttle.waitS('a', 0), 1, 'a is still tracked');
    throttle.failed('c', 10_000);
    throttle.failed('c', 10_000);
    assert.equal(throttle.waitS('c', 10_000), 1, 'once a and b refilled, c is tracked');
  });
});
