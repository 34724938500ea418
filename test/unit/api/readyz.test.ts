// /readyz counts a Temporal whose namespace lacks llmgw's search attributes as not ready: every
// reconciler's workflow task would fail there, and models would wait for ever while the API served.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApp } from '../../../src/api/app.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import type { Sql } from '../../../src/store/db.ts';
import { assertError } from '../../support/assertions.ts';
import { idleReconcilers } from '../../support/stack.ts';

/** A store that answers every query with no rows. */
const store = (async () => []) as unknown as Sql;

async function readyz(missingSearchAttributes?: () => Promise<string[]>) {
  const app = createApp({
    sql: store,
    reconcilers: idleReconcilers,
    temporalReachable: async () => true,
    missingSearchAttributes,
    policy: DEFAULT_POLICY_SETTINGS,
    metricsRefreshMs: 0,
  });
  const response = await app.request('/readyz');
  return { status: response.status, body: await response.json() };
}

describe('GET /readyz and the search attributes', () => {
  it('-> 503 naming those Temporal lacks', async () => {
    assertError(
      await readyz(async () => ['LlmgwOwnerPath', 'LlmgwStatus']),
      503,
      "Temporal's namespace lacks llmgw's search attributes LlmgwOwnerPath, LlmgwStatus, so no reconciler can run; `llmgw worker` registers them at start where the server allows it",
    );
  });

  it('-> 503 when Temporal does not list them', async () => {
    assertError(
      await readyz(async () => {
        throw new Error('deadline exceeded');
      }),
      503,
      'Temporal did not list its search attributes',
    );
  });

  it('-> 200 when it has them all (or no one checks)', async () => {
    const ready = { status: 200, body: { ok: true, store: 'up', temporal: 'up', reconcilers_missing: 0 } };
    assert.deepEqual(await readyz(async () => []), ready);
    assert.deepEqual(await readyz(), ready);
  });
});
