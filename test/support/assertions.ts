import assert from 'node:assert/strict';
import type { Sql } from '../../src/store/db.ts';
import type { Answer } from './stack.ts';

/** An answer that is an error: the status, exactly `{"error": "<one sentence>"}`, no stack trace. */
export function assertError(answer: Answer, status: number, message?: string | RegExp) {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.deepEqual(Object.keys(answer.body), ['error'], JSON.stringify(answer.body));
  assert.equal(typeof answer.body.error, 'string');
  assert.ok(answer.body.error.length > 0);
  assert.doesNotMatch(answer.body.error, /\n|\.(?:ts|js|mjs|cjs):\d+:\d+/, 'no stack trace');
  if (typeof message === 'string') assert.equal(answer.body.error, message);
  else if (message) assert.match(answer.body.error, message);
}

/** The tables a request to the API could change: their rows say whether a refused request changed nothing. */
const API_TABLES = [
  'orgs',
  'teams',
  'projects',
  'capacity_quotas',
  'models',
  'profiles',
  'measurements',
  'nodes',
  'replicas',
  'load_reports',
  'api_tokens',
  'audit_log',
];

/** Every row of every table the API writes, as plain JSON, so that "nothing changed" means nothing. */
export async function storeRows(sql: Sql): Promise<Record<string, unknown>> {
  const all: Record<string, unknown> = {};
  for (const table of API_TABLES) {
    all[table] = await sql`select to_jsonb(t) as row from ${sql(table)} t order by 1`;
  }
  return JSON.parse(JSON.stringify(all));
}
