import assert from 'node:assert/strict';
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
