// Input and authentication hardening (issue 19, items 5, 7, 8, 11 and 13): amounts below their unit,
// dates Postgres cannot keep, JSON under any Content-Type (issue 20: all bodies are JSON), an expired token answered as an
// unknown one (and told in the audit log), and failed authentications counted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { processMetrics } from '../../src/metrics/registry.ts';
import { newId } from '../../src/store/ids.ts';
import { assertError, storeRows } from '../support/assertions.ts';
import { type Answer, type Stack, startStack } from '../support/stack.ts';

describe('input and authentication hardening', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, shared by every stack of the run: keep them unique.
  const model = `harden-${newId().slice(0, 6)}`;
  const profiles = [{ name: 'cpu', resources: { cores: 1, memory_gib: 2 } }];

  const store = () => storeRows(stack.sql);

  const ok = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const answer = await stack.call(method, path, body, headers);
    assert.ok(answer.status < 300, `${method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };

  before(async () => {
    stack = await startStack();
    await ok('POST', '/api/v1/orgs', { name: 'Acme' });
    await ok('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'small' });
    await ok('PUT', '/api/v1/quotas', { scope: 'project:Acme/ml/small', limit: { cores: 1 } });
    await ok('PUT', `/api/v1/models/${model}`, { owner: 'team:Acme/ml', max_replicas: 2, profiles });
    await ok('PUT', '/api/v1/nodes/node-1', { capacity: { cores: 8, memory_gib: 32 } });
  });
  after(() => stack.stop());

  describe('resource amounts have a unit (item 5)', () => {
    const STEPS =
      /^[\w.]+\.(cores|memory_gib) must have at most 3 decimals \(it counts in steps of 0\.001\)$/;

    it('refuses cores and GiB below 0.001 (or with more than 3 decimals) in profiles, quotas and nodes, changing nothing', async () => {
      const before_ = await store();
      const tiny = { cores: 1e-300, memory_gib: 5e-324 };
      const cases: [string, string, unknown, string][] = [
        [
          'PUT',
          `/api/v1/models/${model}`,
          { owner: 'project:Acme/ml/small', max_replicas: 12, profiles: [{ name: 'cpu', resources: tiny }] },
          'profiles.0.resources.cores',
        ],
        [
          'PUT',
          `/api/v1/models/${model}`,
          { max_replicas: 2, profiles: [{ name: 'cpu', resources: { cores: 1, memory_gib: 5e-324 } }] },
          'profiles.0.resources.memory_gib',
        ],
        [
          'PUT',
          `/api/v1/models/fresh-${model}`,
          { max_replicas: 1, profiles: [{ name: 'cpu', resources: { cores: 0.0005 } }] },
          'profiles.0.resources.cores',
        ],
        [
          'PUT',
          '/api/v1/quotas',
          { scope: 'project:Acme/ml/small', limit: { cores: 1e-300 } },
          'limit.cores',
        ],
        [
          'PUT',
          '/api/v1/quotas',
          { scope: 'team:Acme/ml', guarantee: { memory_gib: 1.2345 } },
          'guarantee.memory_gib',
        ],
        [
          'POST',
          '/api/v1/quotas/preview',
          { scope: 'team:Acme/ml', limit: { cores: 5e-324 } },
          'limit.cores',
        ],
        [
          'PUT',
          '/api/v1/nodes/node-1',
          { capacity: { cores: 8, memory_gib: 1e-300 } },
          'capacity.memory_gib',
        ],
        ['PUT', '/api/v1/nodes/node-2', { capacity: { cores: 0.0001 } }, 'capacity.cores'],
      ];
      for (const [method, path, body, field] of cases) {
        const answer = await stack.call(method, path, body);
        assertError(answer, 400, STEPS);
        assert.ok(answer.body.error.startsWith(`${field} `), `${method} ${path}: ${answer.body.error}`);
      }
      // GPUs are whole: the same tiny amount is refused as a fraction.
      assertError(
        await stack.call('PUT', '/api/v1/nodes/node-1', { capacity: { gpus: 5e-324 } }),
        400,
        'capacity.gpus must be a whole number',
      );
      assert.deepEqual(await store(), before_, 'the refused requests changed nothing');
    });

    it('takes 0 and amounts in thousandths', async () => {
      await ok('PUT', '/api/v1/nodes/node-3', { capacity: { cores: 0.001, memory_gib: 0 } });
      await ok('PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', limit: { cores: 123456.789 } });
      const [node] = await stack.sql`select capacity from nodes where name = 'node-3'`;
      assert.deepEqual(node.capacity, { cores: 0.001, memory_gib: 0 });
      await ok('DELETE', '/api/v1/nodes/node-3');
      await ok('DELETE', '/api/v1/quotas/team%3AAcme%2Fml');
    });
  });

  describe('dates the store cannot keep (item 7)', () => {
    const OUT_OF_RANGE = /^(measured_at|expires_at) must be a time in the years 0001 to 9999 \(UTC\)$/;
    const measurement = (measured_at: string) => ({
      model,
      profile: 'cpu',
      max_concurrency_at_slo: 4,
      throughput_tok_per_sec: 100,
      slo: {},
      measured_at,
    });

    it('refuses measured_at and expires_at outside the years 0001 to 9999 with 400, changing nothing', async () => {
      const before_ = await store();
      for (const at of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-05:00']) {
        assertError(await stack.call('PUT', '/api/v1/measurements', measurement(at)), 400, OUT_OF_RANGE);
      }
      assertError(
        await stack.call('POST', '/api/v1/tokens', {
          name: 'far',
          role: 'viewer',
          expires_at: '9999-12-31T23:59:59-05:00',
        }),
        400,
        OUT_OF_RANGE,
      );
      assert.deepEqual(await store(), before_, 'the refused requests changed nothing');
    });

    it('takes the first and the last moment the store keeps', async () => {
      await ok('PUT', '/api/v1/measurements', measurement('0001-01-01T00:00:00Z'));
      const token = await stack.token({ name: 'late', role: 'viewer', expires_at: '9999-12-31T23:59:59Z' });
      assert.equal(
        (await stack.call('GET', '/api/v1/orgs', undefined, { authorization: `Bearer ${token}` })).status,
        200,
      );
    });
  });

  describe('JSON under any reasonable Content-Type (item 8)', () => {
    it('every body route takes JSON with spaces, case, parameters and +json; Hono never answers itself', async () => {
      const types = [
        'application/json ; charset=utf-8',
        'APPLICATION/JSON;CHARSET=UTF-8',
        'application/json;charset="utf-8"',
        'application/json; charset=iso-8859-1',
        'application/json;',
        '\tapplication/json\t',
        'application/merge-patch+json',
      ];
      const token = (i: number) => `ct-${i}-${newId().slice(0, 4)}`;
      const refused: string[] = [];
      for (const [i, type] of types.entries()) {
        const requests: [string, string, unknown][] = [
          ['POST', '/api/v1/orgs', { name: `Org${i}` }],
          ['POST', '/api/v1/teams', { org: `Org${i}`, name: 'team' }],
          ['POST', '/api/v1/projects', { team: `Org${i}/team`, name: 'project' }],
          ['PUT', '/api/v1/quotas', { scope: `team:Org${i}/team`, limit: { gpus: 1 } }],
          ['POST', '/api/v1/quotas/preview', { scope: `team:Org${i}/team`, limit: { gpus: 2 } }],
          ['PUT', `/api/v1/models/${model}`, { max_replicas: 2, profiles }],
          ['POST', `/api/v1/models/${model}/owner`, { owner: 'team:Acme/ml' }],
          [
            'PUT',
            '/api/v1/measurements',
            { model, profile: 'cpu', max_concurrency_at_slo: 4, throughput_tok_per_sec: 100, slo: {} },
          ],
          ['POST', `/api/v1/models/${model}/target`, { tokens_per_sec: 100 }],
          ['POST', `/api/v1/models/${model}/load`, { in_flight: 1 }],
          ['PUT', `/api/v1/nodes/node-${i + 10}`, { capacity: { cores: 1 } }],
          ['POST', '/api/v1/tokens', { name: token(i), role: 'viewer' }],
        ];
        for (const [method, path, body] of requests) {
          const answer: Answer = await stack.call(method, path, body, { 'content-type': type });
          if (answer.status >= 300) {
            refused.push(`${type} ${method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
          }
        }
      }
      assert.deepEqual(refused, []);
    });

    it('a type that is not JSON, or not a media type, is read as JSON too; Hono never answers itself (issue 20)', async () => {
      for (const [gpus, type] of [
        'application/json, text/plain',
        'application/json; charset = utf-8',
        'text/json',
      ].entries()) {
        const body = { scope: 'team:Acme/ml', limit: { gpus } };
        const answer = await stack.call('PUT', '/api/v1/quotas', body, { 'content-type': type });
        assert.equal(answer.status, 200, `${type}: ${JSON.stringify(answer.body)}`);
        assert.deepEqual((await stack.call('GET', '/api/v1/quotas/team:Acme%2Fml')).body.limit, { gpus });
      }
    });
  });

  describe('failed authentications (items 11 and 13)', () => {
    const raw = async (authorization?: string) => {
      const response = await fetch(`${stack.url}/api/v1/orgs`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      const headers = [...response.headers].filter(([name]) => name !== 'date');
      return { status: response.status, headers, body: await response.text() };
    };
    const failures = async () =>
      Object.fromEntries(
        (await processMetrics.authFailures.get()).values.map((v) => [v.labels.reason, v.value]),
      );

    it('answers an expired token byte for byte as an unknown one, and tells the audit log', async () => {
      const secret = await stack.token({
        name: 'lapsed',
        role: 'viewer',
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      });
      assert.equal((await raw(`Bearer ${secret}`)).status, 200);
      await stack.sql`update api_tokens set expires_at = now() - interval '1 second' where name = 'lapsed'`;
      const [{ expires_at }] = await stack.sql`select expires_at from api_tokens where name = 'lapsed'`;

      const expired = await raw(`Bearer ${secret}`);
      const unknown = await raw(`Bearer llmgw_${'A'.repeat(43)}`);
      assert.equal(expired.status, 401);
      assert.deepEqual(expired, unknown);
      assert.doesNotMatch(expired.body, /expire[sd]? at|\d{4}-\d\d-\d\d/);

      // Recorded without holding up the answer: it is there a moment later, once for a burst.
      await raw(`Bearer ${secret}`);
      let entries: Record<string, any>[] = [];
      for (let tries = 0; tries < 50 && entries.length === 0; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        entries = await stack.sql`
          select actor, action, target, before, after from audit_log where action = 'token.expired-use'`;
      }
      assert.equal(entries.length, 1);
      const [entry] = entries;
      assert.deepEqual(
        { ...entry, after: { ...entry.after, address: typeof entry.after.address } },
        {
          actor: 'lapsed',
          action: 'token.expired-use',
          target: 'token:lapsed',
          before: null,
          after: { expires_at: expires_at.toISOString(), address: 'string', earlier_uses_not_recorded: 0 },
        },
      );
      assert.match(entry.after.address, /^(::ffff:)?127\.0\.0\.1$|^::1$/);
    });

    it('counts each failure by reason in llmgw_auth_failures_total', async () => {
      const secret = await stack.token({
        name: 'lapsing',
        role: 'viewer',
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      });
      await stack.sql`update api_tokens set expires_at = now() - interval '1 second' where name = 'lapsing'`;
      const start = await failures();
      await raw();
      await raw('Basic YWRtaW46YWRtaW4=');
      await raw('Bearer two words');
      await raw(`Bearer llmgw_${'B'.repeat(43)}`);
      await raw(`Bearer ${secret}`);
      await raw(`Bearer ${secret}`);
      assert.equal((await raw(`Bearer ${stack.adminToken}`)).status, 200);
      const end = await failures();
      const grew = Object.fromEntries(
        Object.keys(end).map((reason) => [reason, end[reason] - (start[reason] ?? 0)]),
      );
      assert.deepEqual(grew, { missing: 1, malformed: 2, unknown: 1, expired: 2 });
    });
  });
});
