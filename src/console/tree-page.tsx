import type { Dimension, Resources } from '../domain/resources.ts';
import { exceeding, formatAmount, sum } from '../policy/resources.ts';
import { dimensionsShown, Meter } from './figures.tsx';
import { Page } from './layout.tsx';
import type { PageContext } from './page-context.ts';

/** A scope as GET /api/v1/tree answers it. */
export interface TreeNode {
  scope: string;
  kind: string;
  name: string;
  path: string;
  quota: { guarantee?: Resources; limit?: Resources; priority?: number } | null;
  holds: Required<Resources>;
  borrowed: Required<Resources>;
  children: TreeNode[];
}

/** Each org, team and project the token sees, with a bar per dimension of guarantee, limit, holds and borrowed. */
export async function treePage(ctx: PageContext) {
  const roots = await ctx.api.get<TreeNode[]>('/api/v1/tree');
  return (
    <Page title="Tree" viewer={ctx.viewer} path="/ui/tree" live>
      <p class="legend">
        <span class="key held" /> holds (protected) <span class="key borrowed" /> borrowed{' '}
        <span class="key guarantee" /> guarantee <span class="key limit" /> limit
      </p>
      {roots.length === 0 ? <p>No scope is in view of this token.</p> : <ScopeList nodes={roots} />}
    </Page>
  );
}

function ScopeList(props: { nodes: TreeNode[] }) {
  return (
    <ul class="tree">
      {props.nodes.map((node) => (
        <ScopeItem node={node} />
      ))}
    </ul>
  );
}

function ScopeItem({ node }: { node: TreeNode }) {
  const { guarantee, limit } = node.quota ?? {};
  const atLimit = limit ? dimensionsShown([limit]).filter((d) => node.holds[d] >= limit[d]!) : [];
  // Guarantees nest: children guaranteed more than their parent cannot all be honoured (POLICY.md).
  const granted = sum(node.children.map((child) => child.quota?.guarantee ?? {}));
  const overcommitted = guarantee ? exceeding(granted, guarantee) : null;
  return (
    <li class={`scope ${atLimit.length > 0 ? 'at-limit' : ''} ${overcommitted ? 'overcommitted' : ''}`}>
      <div class="scope-head">
        <strong>{node.name}</strong> <span class="kind">{node.kind}</span>{' '}
        <span class="path" data-scope={node.scope}>
          {node.path}
        </span>
        {node.quota?.priority ? (
          <span class="priority" title="its priority among its siblings">
            priority {node.quota.priority}
          </span>
        ) : null}
        {atLimit.map((d) => (
          <span class="flag">at its limit of {formatAmount(d, limit![d]!)}</span>
        ))}
        {overcommitted ? (
          <span class="flag">
            guarantees overcommitted: children guaranteed{' '}
            {formatAmount(overcommitted, granted[overcommitted]!)} of{' '}
            {formatAmount(overcommitted, guarantee![overcommitted]!)}
          </span>
        ) : null}
      </div>
      {dimensionsShown([guarantee, limit], [node.holds]).map((d) => (
        <QuotaBar dimension={d} node={node} />
      ))}
      {node.children.length > 0 ? <ScopeList nodes={node.children} /> : null}
    </li>
  );
}

/** Holds (its borrowed share apart) against guarantee and limit, on one dimension. */
function QuotaBar({ dimension: d, node }: { dimension: Dimension; node: TreeNode }) {
  const guarantee = node.quota?.guarantee?.[d];
  const limit = node.quota?.limit?.[d];
  const holds = node.holds[d];
  const borrowed = node.borrowed[d];
  const scale = Math.max(holds, guarantee ?? 0, limit ?? 0);
  const words = [
    `holds ${formatAmount(d, holds)}`,
    borrowed > 0 ? `${formatAmount(d, borrowed)} borrowed` : null,
    guarantee !== undefined ? `guarantee ${formatAmount(d, guarantee)}` : null,
    limit !== undefined ? `limit ${formatAmount(d, limit)}` : null,
  ].filter((w) => w !== null);
  // With neither bound there is nothing to measure the holds against: a bar scaled to them alone
  // would always look full.
  const bounded = guarantee !== undefined || limit !== undefined;
  return (
    <div class="bar-row" data-dimension={d}>
      {bounded ? (
        <Meter
          scale={scale}
          label={words.join(', ')}
          segments={[
            { value: holds - borrowed, kind: 'held' },
            { value: borrowed, kind: 'borrowed' },
          ]}
          marks={[
            ...(guarantee !== undefined ? [{ value: guarantee, kind: 'guarantee' }] : []),
            ...(limit !== undefined ? [{ value: limit, kind: 'limit' }] : []),
          ]}
        />
      ) : (
        <span class="unbounded">no guarantee or limit</span>
      )}
      <span class="figures">{words.join(' · ')}</span>
    </div>
  );
}
