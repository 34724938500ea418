import type { NodeGrant } from '../domain/node-grant.ts';
import type { Role } from '../domain/roles.ts';
import type { ScopeKey } from '../domain/scope.ts';

/** Who calls: the token's name (recorded as `updated_by` and in the audit log) and what it may do. */
export interface Identity {
  name: string;
  role: Role;
  /** An operator's scope; the subtree a viewer or reporter is limited to; null: the whole tree. */
  scope: ScopeKey | null;
  /** The only models a reporter may report load for; null: any (within its scope). */
  models: string[] | null;
  /** The one node an agent registers and reports for. */
  node?: string;
  /** That node's address and the most it may declare (absent on agent tokens made before them). */
  nodeGrant?: NodeGrant;
}

export type Action =
  | 'read' // tenant data: orgs, teams, projects, tree, quotas, models, decisions, measurements, replicas
  | 'read-cluster' // nodes: shared by every tenant
  | 'create-scope'
  | 'delete-scope'
  | 'change-quota' // set, preview, remove
  | 'grant-beyond-guarantee' // a guarantee beyond what the scope above is guaranteed (POLICY.md "Guarantees nest")
  | 'change-model' // spec, owner, target throughput, measurements, delete
  | 'report-load'
  | 'change-node'
  | 'change-runtime' // define what runs on nodes: runtimes' commands, environments and parameters
  | 'write-engine' // a profile's inline engine (a command, flags, an environment): runs as written on nodes
  | 'run-node' // register a node, heartbeat, report its replicas and their load (an agent, for its node)
  | 'manage-tokens'
  | 'read-audit'
  | 'read-metrics' // GET /metrics: every tenant's names and figures
  | 'call-model'; // the gateway's /v1 endpoints: requests to a model's replicas

/**
 * Where on the tree a role may do an action:
 * `anywhere`; `within` its scope (the scope itself or beneath it; anywhere for a role bound to none);
 * `beneath` its scope only (never the scope itself: an operator does not raise its own quota).
 * An action a role's row does not name is refused.
 */
type Reach = 'anywhere' | 'within' | 'beneath';

export const PERMISSIONS: Record<Role, Partial<Record<Action, Reach>>> = {
  admin: {
    read: 'anywhere',
    'read-cluster': 'anywhere',
    'create-scope': 'anywhere',
    'delete-scope': 'anywhere',
    'change-quota': 'anywhere',
    // Accepted with warnings: nesting caps what such a guarantee protects.
    'grant-beyond-guarantee': 'anywhere',
    'change-model': 'anywhere',
    'report-load': 'anywhere',
    'change-node': 'anywhere',
    'change-runtime': 'anywhere',
    'write-engine': 'anywhere',
    'run-node': 'anywhere',
    'manage-tokens': 'anywhere',
    'read-audit': 'anywhere',
    'read-metrics': 'anywhere',
    'call-model': 'anywhere',
  },
  operator: {
    read: 'within',
    'read-cluster': 'anywhere',
    // The target of create-scope is the parent: a project created in the operator's team lies beneath it.
    'create-scope': 'within',
    'delete-scope': 'beneath',
    'change-quota': 'beneath',
    'change-model': 'within',
    'report-load': 'within',
    'call-model': 'within',
  },
  viewer: { read: 'within', 'read-cluster': 'anywhere' },
  reporter: { 'report-load': 'within' },
  metrics: { 'read-metrics': 'anywhere' },
  client: { 'call-model': 'within' },
  // Bound to its node by may(): it acts for no other.
  agent: { 'run-node': 'anywhere' },
};

/** What an action is done to. */
export interface Target {
  /** The scope acted on (for create-scope: the parent), then its parent, up to its org; [] for none. */
  chain: readonly ScopeKey[];
  /** The model acted on, for the model actions. */
  model?: string;
  /** The node acted on, for run-node. */
  node?: string;
}

/** How a scope is written in sentences: `team:Acme/ml` (the store's scopes know; the key will do). */
export type Label = (key: ScopeKey) => string;

export type Verdict = { allowed: true } | { allowed: false; why: string };

const ALLOWED: Verdict = { allowed: true };

/** A label that leaves scope keys as they are. */
const asIs: Label = (key) => key;

/** A refusal of `who`, saying who it is. (Not a closure in may: it runs on every gateway request.) */
const refused = (who: Identity, label: Label, why: string): Verdict => ({
  allowed: false,
  why: `${describe(who, label)} ${why}`,
});

/**
 * Whether `who` may do `action` to `target`. Without a target: whether its role may do the action at
 * all (routes ask this first, so that a refused role learns nothing about the thing it named).
 */
export function may(who: Identity, action: Action, target?: Target, label: Label = asIs): Verdict {
  const reach = PERMISSIONS[who.role][action];
  if (!reach) {
    return refused(
      who,
      label,
      `may not ${VERBS[action]}: ${action === 'read-metrics' ? METRICS_LIMIT : ROLE_LIMIT[who.role]}`,
    );
  }
  // An agent token made before 017 bounds nothing: its agent is refused until an admin makes a new one.
  if (who.role === 'agent' && !who.nodeGrant) {
    return refused(
      who,
      label,
      'may not act: its token was made before node addresses and bounds; an admin makes a new one with both',
    );
  }
  if (who.node !== undefined && target?.node !== undefined && target.node !== who.node) {
    return refused(
      who,
      label,
      `may not act for node ${target.node}: it registers and reports for its own node only`,
    );
  }
  if (!target || reach === 'anywhere') return ALLOWED;

  if (who.models && target.model !== undefined && !who.models.includes(target.model)) {
    return refused(
      who,
      label,
      `may not ${phrase(action, target, label)}: it reports only for ${who.models.join(', ')}`,
    );
  }
  if (who.scope === null) return ALLOWED;
  const [acted] = target.chain;
  if (reach === 'beneath' && acted === who.scope) {
    return refused(who, label, `may not ${phrase(action, target, label, `its own scope ${label(acted)}`)}`);
  }
  if (target.chain.includes(who.scope)) return ALLOWED;
  const where =
    acted !== undefined
      ? `it is not ${reach === 'beneath' ? 'beneath' : 'within'} ${label(who.scope)}`
      : action === 'create-scope'
        ? ONLY_AN_ADMIN
        : 'it belongs to no scope';
  return refused(who, label, `may not ${phrase(action, target, label)}: ${where}`);
}

/** Whether `who` sees what is owned by the scope whose chain this is ([]: owned by none). */
export const sees = (who: Identity, chain: readonly ScopeKey[]) => may(who, 'read', { chain }).allowed;

/**
 * Whether `who` may set a guarantee that overruns its parent's budget (`why` says how, from
 * policy/guarantee-grants.ts; null: it does not): an operator grants only out of its own guarantee.
 */
export function mayOverrun(who: Identity, why: string | null, label: Label = asIs): Verdict {
  if (why === null || PERMISSIONS[who.role]['grant-beyond-guarantee']) return ALLOWED;
  return refused(who, label, why);
}

const ROLE_NOUN: Partial<Record<Role, string>> = { metrics: 'metrics token', client: 'client key' };

/** `an operator of team:Acme/ml`, `a viewer`, `an admin`, `a client key of team:Acme/ml`, `an agent of node gpu-1`. */
function describe(who: Identity, label: Label): string {
  const article = who.role === 'admin' || who.role === 'operator' || who.role === 'agent' ? 'an' : 'a';
  const of = who.scope ? ` of ${label(who.scope)}` : who.node ? ` of node ${who.node}` : '';
  return `${article} ${ROLE_NOUN[who.role] ?? who.role}${of}`;
}

const VERBS: Record<Action, string> = {
  read: 'read',
  'read-cluster': 'read the nodes',
  'create-scope': 'create orgs, teams or projects',
  'delete-scope': 'delete orgs, teams or projects',
  'change-quota': 'change quotas',
  'grant-beyond-guarantee': 'grant guarantees beyond what the scope above is guaranteed',
  'change-model': 'change models or their measurements',
  'report-load': 'report load',
  'change-node': 'change nodes',
  'change-runtime': 'change runtimes',
  'write-engine': 'write an inline engine',
  'run-node': 'register or report for nodes',
  'manage-tokens': 'manage tokens',
  'read-audit': 'read the audit log',
  'read-metrics': 'read the metrics',
  'call-model': 'call models',
};

const ONLY_AN_ADMIN = 'only an admin may';

/** The metrics name every tenant's scopes and models, so no role bound to a part of the tree reads them. */
const METRICS_LIMIT = 'they cover every tenant; an admin or a metrics token reads them';

/** Why a role lacks an action its row does not name. */
const ROLE_LIMIT: Record<Role, string> = {
  admin: 'an admin may do anything',
  operator: ONLY_AN_ADMIN,
  viewer: 'a viewer only reads',
  reporter: 'a reporter only reports load (POST /api/v1/models/{name}/load)',
  metrics: 'a metrics token only reads GET /metrics',
  client: "a client key only calls its scope's models through the gateway (/v1)",
  agent: 'an agent only registers and reports for its node (/api/v1/nodes/{name})',
};

/** The action done to this target, e.g. `change the quota of team:Acme/ml`. */
function phrase(
  action: Action,
  target: Target,
  label: Label,
  scope = target.chain[0] && label(target.chain[0]),
) {
  const model = `model ${target.model}`;
  switch (action) {
    case 'create-scope':
      return scope ? `create a scope in ${scope}` : 'create an org';
    case 'delete-scope':
      return `delete ${scope}`;
    case 'change-quota':
      return `change the quota of ${scope}`;
    case 'change-model':
      return `change ${model}`;
    case 'report-load':
      return `report the load of ${model}`;
    case 'call-model':
      return `call ${model}`;
    default:
      return `${VERBS[action]} ${target.model ? model : scope}`;
  }
}
