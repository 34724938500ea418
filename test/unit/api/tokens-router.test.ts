// The tokens router in-process: a grant a role cannot have is refused before the store is reached.
import { describe, it } from 'node:test';
import { tokensRouter } from '../../../src/api/routes/tokens/index.ts';
import { assertError } from '../../support/assertions.ts';
import { admin, routerAs, send } from './in-process.ts';

describe('tokens router, before the store', () => {
  const app = routerAs(tokensRouter, admin);

  it('refuses what a role cannot be given (400, one sentence)', async () => {
    const cases: [body: object, error: string][] = [
      [{ name: 'ops', role: 'operator' }, 'an operator token needs a scope: the one it manages beneath'],
      [{ name: 'app', role: 'client' }, 'a client key needs a scope: the one whose models it calls'],
      [
        { name: 'root', role: 'admin', scope: 'org:Acme' },
        'an admin token takes no scope: it may do anything anywhere',
      ],
      [
        { name: 'prom', role: 'metrics', scope: 'org:Acme' },
        'a metrics token takes no scope: the metrics cover every tenant',
      ],
      [{ name: 'eyes', role: 'viewer', models: ['chat'] }, 'only a reporter token is limited to models'],
      [
        { name: 'late', role: 'viewer', expires_at: '2001-01-01T00:00:00Z' },
        'expires_at 2001-01-01T00:00:00Z is not in the future',
      ],
      [
        { name: 'a b', role: 'viewer' },
        'name must be 1 to 100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
      ],
    ];
    for (const [body, error] of cases)
      assertError(await send(app, 'POST', '/api/v1/tokens', body), 400, error);
  });

  it('refuses an operator (403): tokens are for admins', async () => {
    const operator = routerAs(tokensRouter, { name: 'op', role: 'operator', scope: 'org:o1', models: null }, [
      { key: 'org:o1', kind: 'org', id: 'o1', name: 'Acme', parent: null },
    ]);
    assertError(await send(operator, 'GET', '/api/v1/tokens'), 403);
  });
});
