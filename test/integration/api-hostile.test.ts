// Hostile input, by hand: oversized bodies (with and without a length), wrong content types, JSON nested
// 10,000 levels deep, huge numbers, unicode and path traversal in names. Each gets a 4xx with one
// sentence, and the store (every table, the audit log too) is the same afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { storeRows } from '../support/assertions.ts';
import { type Answer, type Stack, startStack } from '../support/stack.ts';

const nested = (levels: number, open: string, close: string, inner = '1') =>
  `${open.repeat(levels)}${inner}${close.repeat(levels)}`;

describe('hostile input', () => {
  let stack: Stack;
  const model = `hostile-${newId().slice(0, 6)}`;
  const profiles = [{ name: 'gpu', resources: { gpus: 1 } }];

  const store = () => storeRows(stack.sql);

  /** Each answer a 4xx `{"error": "<one sentence>"}`; the failures, described. */
  const refusals = (answers: [string, Answer][], status?: number | RegExp) =>
    answers
      .filter(([, answer]) => {
        const shaped =
          answer.body &&
          typeof answer.body === 'object' &&
          Object.keys(answer.body).join() === 'error' &&
          typeof answer.body.error === 'string' &&
          answer.body.error.length > 0 &&
          !/\n/.test(answer.body.error);
        const right =
          status === undefined
            ? answer.status >= 400 && answer.status < 500
            : typeof status === 'number'
              ? answer.status === status
              : status.test(answer.body?.error ?? '');
        return !shaped || !right;
      })
      .map(([what, answer]) => `${what} -> ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);

  let before_: unknown;
  before(async () => {
    stack = await startStack();
    for (const [method, path, body] of [
      ['POST', '/api/v1/orgs', { name: 'Acme' }],
      ['POST', '/api/v1/teams', { org: 'Acme', name: 'ml' }],
      ['PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', limit: { gpus: 4 } }],
      ['PUT', `/api/v1/models/${model}`, { owner: 'team:Acme/ml', max_replicas: 2, profiles }],
      ['PUT', '/api/v1/nodes/node-1', { capacity: { gpus: 8 } }],
    ] as const) {
      const answer = await stack.call(method, path, body);
      assert.ok(answer.status < 300, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    }
    before_ = await store();
  });
  after(async () => {
    assert.deepEqual(await store(), before_, 'the refused requests changed nothing in the store');
    await stack.stop();
  });

  it('oversized bodies: 413 at each bound, also when sent without a length', async () => {
    const pad = (kib: number) => 'x'.repeat(kib * 1024);
    const answers: [string, Answer][] = [];
    for (const [method, path, body] of [
      ['PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', limit: { gpus: 1 }, pad: pad(17) }],
      ['POST', '/api/v1/quotas/preview', { scope: 'team:Acme/ml', pad: pad(17) }],
      ['POST', '/api/v1/orgs', { name: pad(5) }],
      ['POST', `/api/v1/models/${model}/owner`, { owner: pad(5) }],
      ['PUT', `/api/v1/models/${model}`, { max_replicas: 1, profiles, pad: pad(257) }],
      ['PUT', '/api/v1/measurements', { model, pad: pad(257) }],
      ['PUT', '/api/v1/nodes/node-1', { capacity: {}, labels: { a: pad(17) } }],
      ['POST', '/api/v1/tokens', { name: 'big', role: 'viewer', pad: pad(5) }],
      ['POST', `/api/v1/models/${model}/load`, { in_flight: 1, pad: pad(5) }],
    ] as const) {
      answers.push([`${method} ${path}`, await stack.call(method, path, body)]);
    }
    assert.deepEqual(refusals(answers, 413), []);
    for (const [, answer] of answers) assert.match(answer.body.error, /^the body is larger than \d+ KiB/);

    // 64 MiB streamed without Content-Length: refused once the bound is passed, not held whole.
    let sent = 0;
    const chunk = new TextEncoder().encode(`{"scope": "team:Acme/ml", "pad": "${'x'.repeat(64 * 1024)}`);
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.byteLength;
        if (sent > 64 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const streamed = await fetch(`${stack.url}/api/v1/quotas`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
      body: endless,
      duplex: 'half',
    } as RequestInit);
    assert.equal(streamed.status, 413);
    assert.match((await streamed.json()).error, /larger than 16 KiB/);
    assert.ok(sent < 64 * 1024 * 1024, `the server stopped reading early (${sent} bytes pulled)`);
  });

  it('wrong content types: a body that is not JSON is refused as such, whatever type it claims', async () => {
    // Every body is read as JSON (as the original API did), so a form, a multipart or XML body is not.
    const bodies: [string, string][] = [
      ['text/plain', 'scope team:Acme/ml'],
      ['application/xml', '<quota scope="team:Acme/ml"><limit gpus="1"/></quota>'],
      [
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="scope"\r\n\r\nteam:Acme/ml\r\n--x--\r\n',
      ],
      ['application/x-www-form-urlencoded', 'scope=team%3AAcme%2Fml&limit=1'],
      ['application/jsonp', 'callback({"scope": "team:Acme/ml"})'],
      ['application/json-seq', '\x1e{"scope": "team:Acme/ml", "limit": {"gpus": 1}}\n'],
      ['', 'team:Acme/ml'],
    ];
    const answers: [string, Answer][] = [];
    for (const [type, body] of bodies) {
      answers.push([
        type || '(none)',
        await stack.call('PUT', '/api/v1/quotas', body, { 'content-type': type }),
      ]);
    }
    assert.deepEqual(refusals(answers, /^the request is not valid JSON: \S/), []);
  });

  it('JSON nested 10,000 levels deep, anywhere in a body: 400 (or 413 past the bound)', async () => {
    const deepObject = nested(10_000, '{"a":', '}');
    const deepArray = nested(10_000, '[', ']');
    const answers: [string, Answer][] = [];
    for (const [path, method, body] of [
      ['/api/v1/quotas', 'PUT', deepArray],
      ['/api/v1/orgs', 'POST', deepObject],
      [`/api/v1/models/${model}`, 'PUT', deepArray],
      [`/api/v1/models/${model}`, 'PUT', deepObject],
      [
        `/api/v1/models/${model}`,
        'PUT',
        `{"max_replicas": 1, "profiles": [{"name": "gpu", "resources": {"gpus": 1}, "engine": {"kind": "sim", "deep": ${deepObject}}}]}`,
      ],
      [
        `/api/v1/models/${model}`,
        'PUT',
        `{"max_replicas": 1, "profiles": [{"name": "gpu", "resources": {"gpus": 1}, "engine": {"kind": "sim", "deep": ${deepArray}}}]}`,
      ],
      ['/api/v1/measurements', 'PUT', `{"model": "${model}", "profile": "gpu", "slo": ${deepObject}}`],
      ['/api/v1/measurements', 'PUT', `{"model": "${model}", "profile": "gpu", "points": ${deepArray}}`],
      [`/api/v1/models/${model}`, 'PUT', nested(100_000, '[', ']')],
    ] as const) {
      answers.push([`${method} ${path} ${body.slice(0, 60)}`, await stack.call(method, path, body)]);
    }
    assert.deepEqual(refusals(answers), []);
  });

  it('huge numbers: 400 saying which field', async () => {
    const answers: [string, Answer][] = [];
    const cases: [string, string, unknown][] = [
      ['PUT', '/api/v1/quotas', '{"scope": "team:Acme/ml", "limit": {"gpus": 1e400}}'],
      ['PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', limit: { cores: 1.7e308 } }],
      ['PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 2 ** 53 + 1 } }],
      ['PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', limit: { memory_gib: -1e308 } }],
      ['PUT', '/api/v1/nodes/node-1', { capacity: { gpus: 1e300 } }],
      ['PUT', `/api/v1/models/${model}`, { max_replicas: 1e20, profiles }],
      ['PUT', `/api/v1/models/${model}`, { max_replicas: 1, target_tokens_per_sec: 1e308, profiles }],
      ['PUT', `/api/v1/models/${model}`, '{"max_replicas": 1e400, "profiles": []}'],
      ['POST', `/api/v1/models/${model}/load`, { in_flight: 1e20 }],
      ['POST', `/api/v1/models/${model}/target`, { tokens_per_sec: 1.7e308 }],
      [
        'PUT',
        '/api/v1/measurements',
        { model, profile: 'gpu', max_concurrency_at_slo: 1, throughput_tok_per_sec: 1e308, slo: {} },
      ],
      ['GET', `/api/v1/models/${model}/decisions?limit=1e309`, undefined],
      ['GET', '/api/v1/audit?limit=99999999999999999999', undefined],
    ];
    for (const [method, path, body] of cases) {
      answers.push([
        `${method} ${path} ${String(JSON.stringify(body)).slice(0, 80)}`,
        await stack.call(method, path, body),
      ]);
    }
    assert.deepEqual(refusals(answers, 400), []);
    assert.match(answers[1][1].body.error, /^limit\.cores must be at most 1e12$/);
  });

  it('unicode and path traversal in names: 4xx with a sentence, never a file or another resource', async () => {
    const names = [
      '../../etc',
      '..%2F..%2Fetc',
      '%2e%2e%2f',
      'Acme\u202eevil',
      '\u202eemEcA',
      '🦙',
      'zero\u200bwidth',
      'Ａｃｍｅ',
      'a/b',
      'org:x',
      ' ',
      '.',
      '..',
      'x'.repeat(300),
    ];
    const answers: [string, Answer][] = [];
    const call = async (method: string, path: string, body?: unknown) =>
      answers.push([
        `${method} ${path.slice(0, 80)} ${JSON.stringify(body ?? '').slice(0, 60)}`,
        await stack.call(method, path, body),
      ]);
    for (const name of names) {
      const inPath = encodeURIComponent(name);
      await call('POST', '/api/v1/orgs', { name });
      await call('POST', '/api/v1/teams', { org: 'Acme', name });
      await call('POST', '/api/v1/teams', { org: name, name: 'ok' });
      await call('PUT', '/api/v1/quotas', { scope: `team:${name}`, limit: { gpus: 1 } });
      await call('PUT', `/api/v1/models/${inPath}`, { max_replicas: 1, profiles });
      await call('PUT', `/api/v1/models/${model}`, {
        max_replicas: 1,
        profiles: [{ name, resources: { gpus: 1 } }],
      });
      await call('PUT', `/api/v1/nodes/${inPath}`, { capacity: { gpus: 1 } });
      await call('POST', '/api/v1/tokens', { name, role: 'viewer' });
      await call('DELETE', `/api/v1/tokens/${inPath}`);
      await call('DELETE', `/api/v1/orgs/${inPath}`);
      await call('DELETE', `/api/v1/quotas/${inPath}`);
      await call('GET', `/api/v1/models/${inPath}/decisions`);
    }
    for (const source of ['..', '.', '../../etc', '%2e%2e%2f', 'Acme\u202eevil', '🦙']) {
      await call('POST', `/api/v1/models/${model}/load`, { in_flight: 1, source });
    }
    // Traversal the URL itself resolves lands on paths that do not exist, not on files.
    for (const path of [
      '/api/v1/models/../../etc/passwd',
      '/api/v1/models/%2e%2e/%2e%2e/etc/passwd',
      '/api/v1/..%2f..%2fetc',
    ]) {
      await call('GET', path);
    }
    assert.deepEqual(refusals(answers), []);
  });
});
