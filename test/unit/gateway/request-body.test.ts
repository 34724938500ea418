// The gateway reads one field of a forwarded body, `model`, by hand on its hot path
// (src/gateway/request-body.ts): each body that names no model is refused as bad_request, and any other
// passes with its fields as sent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Refusal } from '../../../src/gateway/errors.ts';
import { routedRequest } from '../../../src/gateway/request-body.ts';

const refusalOf = (text: string) => {
  try {
    routedRequest(Buffer.from(text));
  } catch (error) {
    return error instanceof Refusal ? error.kind : `not a refusal: ${String(error)}`;
  }
  return 'passed';
};

describe('routedRequest', () => {
  const cases: [name: string, body: string, outcome: string][] = [
    ['an object naming a model', '{"model":"chat","messages":[]}', 'passed'],
    ['a model name of 200 characters', JSON.stringify({ model: 'm'.repeat(200) }), 'passed'],
    ['a model name of 201 characters', JSON.stringify({ model: 'm'.repeat(201) }), 'bad_request'],
    ['an empty model name', '{"model":""}', 'bad_request'],
    ['no model', '{"messages":[]}', 'bad_request'],
    ['a model that is not a string', '{"model":7}', 'bad_request'],
    ['an array', '[{"model":"chat"}]', 'bad_request'],
    ['null', 'null', 'bad_request'],
    ['a string', '"chat"', 'bad_request'],
    ['a number', '7', 'bad_request'],
    ['no JSON at all', '{"model":', 'bad_request'],
  ];
  for (const [name, body, outcome] of cases) {
    it(`${name}: ${outcome}`, () => assert.equal(refusalOf(body), outcome));
  }

  it('passes the body as sent, and its fields as parsed', () => {
    const body = Buffer.from('{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}');
    const routed = routedRequest(body);
    assert.equal(routed.body, body);
    assert.equal(routed.model, 'chat');
    assert.deepEqual(routed.fields, JSON.parse(body.toString()));
  });
});
