import { ENDED_STATES } from '../domain/cluster.ts';
import type { Dimension, Resources } from '../domain/resources.ts';
import { formatAmount } from '../policy/resources.ts';
import { dimensionsShown, Meter } from './figures.tsx';
import { Page } from './layout.tsx';
import type { ReplicaRow } from './model-page.tsx';
import type { PageContext } from './page-context.ts';

/** A node as GET /api/v1/nodes answers it. */
interface NodeRow {
  name: string;
  capacity: Resources;
  allocated: Required<Resources>;
  reserved: Required<Resources>;
  gpu_model: string | null;
  state: string;
}

/**
 * Every node: capacity, allocated and reserved per dimension, and the replicas on it that the token
 * may see (the figures count all tenants' replicas; the names only those in view).
 */
export async function nodesPage(ctx: PageContext) {
  const [nodes, replicas] = await Promise.all([
    ctx.api.get<NodeRow[]>('/api/v1/nodes'),
    ctx.api.get<ReplicaRow[]>('/api/v1/replicas'),
  ]);
  const active = replicas.filter((r) => !ENDED_STATES.includes(r.state));
  return (
    <Page title="Nodes" viewer={ctx.viewer} path="/ui/nodes" live>
      <p class="legend">
        <span class="key held" /> allocated <span class="key reserved" /> reserved for pending replicas, of
        the capacity
      </p>
      <div class="nodes">
        {nodes.map((node) => (
          <NodeCard node={node} replicas={active.filter((r) => r.node === node.name)} />
        ))}
      </div>
    </Page>
  );
}

function NodeCard({ node, replicas }: { node: NodeRow; replicas: ReplicaRow[] }) {
  return (
    <section class="node" data-node={node.name}>
      <h2>
        {node.name} <span class="kind">{node.gpu_model ?? 'CPU'}</span>
        {node.state !== 'ready' ? <span class="flag">{node.state}</span> : null}
      </h2>
      {dimensionsShown([node.capacity]).map((d) => (
        <NodeBar dimension={d} node={node} />
      ))}
      <ul class="on-node">
        {replicas.map((r) => (
          <li>
            <a href={`/ui/models/${encodeURIComponent(r.model)}`}>{r.model}</a> {r.profile} · {r.state}
          </li>
        ))}
      </ul>
    </section>
  );
}

function NodeBar({ dimension: d, node }: { dimension: Dimension; node: NodeRow }) {
  const capacity = node.capacity[d] ?? 0;
  const words = `${formatAmount(d, node.allocated[d])} allocated, ${formatAmount(d, node.reserved[d])} reserved, of ${formatAmount(d, capacity)}`;
  return (
    <div class="bar-row" data-dimension={d}>
      <Meter
        scale={capacity}
        label={words}
        segments={[
          { value: node.allocated[d], kind: 'held' },
          { value: node.reserved[d], kind: 'reserved' },
        ]}
      />
      <span class="figures">{words}</span>
    </div>
  );
}
