// The permission table of src/contracts/permissions.ts, row by row: each role against each action, on
// its own scope, beneath it, beside it and on things no scope owns; and the sentences of refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Action, type Identity, may, PERMISSIONS, sees } from '../../../src/contracts/permissions.ts';
import type { ScopeKey } from '../../../src/domain/scope.ts';

// Acme > ml > training, Acme > web, Beta.
const PARENT: Record<string, ScopeKey | null> = {
  'org:acme': null,
  'team:ml': 'org:acme',
  'project:training': 'team:ml',
  'team:web': 'org:acme',
  'org:beta': null,
};
const LABEL: Record<string, string> = {
  'org:acme': 'org:Acme',
  'team:ml': 'team:Acme/ml',
  'project:training': 'project:Acme/ml/training',
  'team:web': 'team:Acme/web',
  'org:beta': 'org:Beta',
};
const label = (key: ScopeKey) => LABEL[key] ?? key;
const chain = (key: ScopeKey | null): ScopeKey[] => (key ? [key, ...chain(PARENT[key])] : []);

const GRANT = { address: '10.0.0.7', bounds: { capacity: { gpus: 8 } } };
/** An agent's identity carries its node and node grant, as an agent token made since migration 017. */
const who = (role: Identity['role'], scope: string | null = null, models: string[] | null = null) =>
  ({
    name: 't',
    role,
    scope: scope as ScopeKey | null,
    models,
    ...(role === 'agent' && { node: 'gpu-7', nodeGrant: GRANT }),
  }) as Identity;

const admin = who('admin');
const mlOperator = who('operator', 'team:ml');
const viewer = who('viewer');
const betaViewer = who('viewer', 'org:beta');
const reporter = who('reporter');
const chatReporter = who('reporter', null, ['chat']);
const mlReporter = who('reporter', 'team:ml');
const prometheus = who('metrics');
const mlClient = who('client', 'team:ml');

/** [who, action, the scope acted on (null: none), model, allowed]. */
const TABLE: [Identity, Action, ScopeKey | null, string | undefined, boolean][] = [
  // admin: everything, anywhere
  [admin, 'change-node', null, undefined, true],
  [admin, 'manage-tokens', null, undefined, true],
  [admin, 'read-audit', null, undefined, true],
  [admin, 'change-quota', 'org:acme', undefined, true],
  [admin, 'create-scope', null, undefined, true],
  [admin, 'change-model', null, 'orphan', true],
  // an operator of team:Acme/ml
  [mlOperator, 'change-quota', 'project:training', undefined, true],
  [mlOperator, 'change-quota', 'team:ml', undefined, false],
  [mlOperator, 'change-quota', 'org:acme', undefined, false],
  [mlOperator, 'change-quota', 'team:web', undefined, false],
  [mlOperator, 'create-scope', 'team:ml', undefined, true],
  [mlOperator, 'create-scope', 'project:training', undefined, true],
  [mlOperator, 'create-scope', 'org:acme', undefined, false],
  [mlOperator, 'create-scope', null, undefined, false],
  [mlOperator, 'delete-scope', 'project:training', undefined, true],
  [mlOperator, 'delete-scope', 'team:ml', undefined, false],
  [mlOperator, 'change-model', 'team:ml', 'chat', true],
  [mlOperator, 'change-model', 'project:training', 'chat', true],
  [mlOperator, 'change-model', 'team:web', 'code', false],
  [mlOperator, 'change-model', 'org:acme', 'chat', false],
  [mlOperator, 'change-model', null, 'orphan', false],
  [mlOperator, 'report-load', 'team:ml', 'chat', true],
  [mlOperator, 'report-load', 'team:web', 'code', false],
  [mlOperator, 'read', 'project:training', undefined, true],
  [mlOperator, 'read', 'team:web', undefined, false],
  [mlOperator, 'read-cluster', null, undefined, true],
  [mlOperator, 'change-node', null, undefined, false],
  [mlOperator, 'manage-tokens', null, undefined, false],
  [mlOperator, 'read-audit', null, undefined, false],
  // viewers: read only, a bound one only its subtree
  [viewer, 'read', 'team:web', undefined, true],
  [viewer, 'read', null, undefined, true],
  [viewer, 'read-cluster', null, undefined, true],
  [viewer, 'change-quota', 'project:training', undefined, false],
  [viewer, 'report-load', 'team:ml', 'chat', false],
  [betaViewer, 'read', 'org:beta', undefined, true],
  [betaViewer, 'read', 'org:acme', undefined, false],
  [betaViewer, 'read', 'team:ml', undefined, false],
  [betaViewer, 'read', null, undefined, false],
  [betaViewer, 'change-model', 'org:beta', 'b', false],
  // reporters: load only, for their models or within their scope
  [reporter, 'report-load', 'team:web', 'code', true],
  [reporter, 'report-load', null, 'orphan', true],
  [reporter, 'read', 'team:web', undefined, false],
  [reporter, 'read-cluster', null, undefined, false],
  [reporter, 'change-model', 'team:web', 'code', false],
  [chatReporter, 'report-load', 'team:ml', 'chat', true],
  [chatReporter, 'report-load', 'team:ml', 'embed', false],
  [mlReporter, 'report-load', 'project:training', 'trainer', true],
  [mlReporter, 'report-load', 'team:web', 'code', false],
  // metrics tokens: GET /metrics only; nobody bound to a part of the tree reads every tenant's figures
  [prometheus, 'read-metrics', null, undefined, true],
  [prometheus, 'read', null, undefined, false],
  [prometheus, 'read-cluster', null, undefined, false],
  [prometheus, 'report-load', null, 'orphan', false],
  [admin, 'read-metrics', null, undefined, true],
  [mlOperator, 'read-metrics', null, undefined, false],
  [viewer, 'read-metrics', null, undefined, false],
  [reporter, 'read-metrics', null, undefined, false],
  // client keys: call the models within their scope through the gateway, nothing else
  [mlClient, 'call-model', 'team:ml', 'chat', true],
  [mlClient, 'call-model', 'project:training', 'trainer', true],
  [mlClient, 'call-model', 'team:web', 'code', false],
  [mlClient, 'call-model', 'org:acme', 'shared', false],
  [mlClient, 'call-model', null, 'orphan', false],
  [mlClient, 'read', 'team:ml', undefined, false],
  [mlClient, 'report-load', 'team:ml', 'chat', false],
  [mlClient, 'read-metrics', null, undefined, false],
  [admin, 'call-model', 'team:web', 'code', true],
  [mlOperator, 'call-model', 'project:training', 'trainer', true],
  [mlOperator, 'call-model', 'team:web', 'code', false],
  [viewer, 'call-model', 'team:web', 'code', false],
  [reporter, 'call-model', 'team:web', 'code', false],
];

describe('permissions', () => {
  for (const [identity, action, scope, model, allowed] of TABLE) {
    const as = `${identity.role}${identity.scope ? ` of ${identity.scope}` : ''}${identity.models ? ` for ${identity.models}` : ''}`;
    it(`${as} ${allowed ? 'may' : 'may not'} ${action} ${model ?? scope ?? '(nothing owned)'}`, () => {
      const verdict = may(identity, action, { chain: chain(scope), model }, label);
      assert.equal(verdict.allowed, allowed, verdict.allowed ? 'allowed' : verdict.why);
    });
  }

  it('without a target, answers whether the role may do the action at all', () => {
    for (const [role, actions] of Object.entries(PERMISSIONS)) {
      for (const action of Object.keys(PERMISSIONS.admin) as Action[]) {
        const verdict = may(who(role as Identity['role'], 'team:ml'), action);
        assert.equal(verdict.allowed, action in actions, `${role} ${action}`);
      }
    }
  });

  it('refuses everything to an agent token made before node addresses and bounds, in one sentence', () => {
    const { nodeGrant: _, ...legacy } = who('agent');
    assert.deepEqual(may(legacy, 'run-node', { chain: [], node: 'gpu-7' }), {
      allowed: false,
      why: 'an agent of node gpu-7 may not act: its token was made before node addresses and bounds; an admin makes a new one with both',
    });
    assert.equal(may(who('agent'), 'run-node', { chain: [], node: 'gpu-7' }).allowed, true);
  });

  it('says in one sentence what the role lacks', () => {
    const why = (identity: Identity, action: Action, scope: ScopeKey | null, model?: string) => {
      const verdict = may(identity, action, { chain: chain(scope), model }, label);
      return verdict.allowed ? 'allowed' : verdict.why;
    };
    assert.equal(
      why(mlOperator, 'change-quota', 'team:ml'),
      'an operator of team:Acme/ml may not change the quota of its own scope team:Acme/ml',
    );
    assert.equal(
      why(mlOperator, 'change-quota', 'team:web'),
      'an operator of team:Acme/ml may not change the quota of team:Acme/web: it is not beneath team:Acme/ml',
    );
    assert.equal(
      why(mlOperator, 'change-model', null, 'orphan'),
      'an operator of team:Acme/ml may not change model orphan: it belongs to no scope',
    );
    assert.equal(
      why(mlOperator, 'change-node', null),
      'an operator of team:Acme/ml may not change nodes: only an admin may',
    );
    assert.equal(
      why(betaViewer, 'change-quota', 'org:beta'),
      'a viewer of org:Beta may not change quotas: a viewer only reads',
    );
    assert.equal(
      why(reporter, 'read', null),
      'a reporter may not read: a reporter only reports load (POST /api/v1/models/{name}/load)',
    );
    assert.equal(
      why(mlClient, 'call-model', 'team:web', 'code'),
      'a client key of team:Acme/ml may not call model code: it is not within team:Acme/ml',
    );
    assert.equal(
      why(mlClient, 'read', 'team:ml'),
      "a client key of team:Acme/ml may not read: a client key only calls its scope's models through the gateway (/v1)",
    );
    assert.equal(
      why(chatReporter, 'report-load', 'team:ml', 'embed'),
      'a reporter may not report the load of model embed: it reports only for chat',
    );
    assert.equal(
      why(mlOperator, 'create-scope', null),
      'an operator of team:Acme/ml may not create an org: only an admin may',
    );
    assert.equal(
      why(viewer, 'read-metrics', null),
      'a viewer may not read the metrics: they cover every tenant; an admin or a metrics token reads them',
    );
    assert.equal(
      why(prometheus, 'read', 'team:ml'),
      'a metrics token may not read: a metrics token only reads GET /metrics',
    );
  });

  it('sees() is the read permission: a bound viewer sees only its subtree, and nothing owned by none', () => {
    assert.equal(sees(betaViewer, chain('org:beta')), true);
    assert.equal(sees(betaViewer, chain('project:training')), false);
    assert.equal(sees(betaViewer, []), false);
    assert.equal(sees(viewer, []), true);
    assert.equal(sees(mlOperator, chain('project:training')), true);
    assert.equal(sees(reporter, chain('org:beta')), false);
  });
});
