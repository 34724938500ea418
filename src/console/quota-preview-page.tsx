import type { QuotaPreviewAnswer } from '../contracts/schemas/quotas.ts';
import { DIMENSIONS, type Dimension, type Resources } from '../domain/resources.ts';
import { formatResources } from '../policy/resources.ts';
import { ApiRefusal } from './api-client.ts';
import { Page, Problem } from './layout.tsx';
import type { PageContext } from './page-context.ts';
import type { TreeNode } from './tree-page.tsx';

const UNITS: Record<Dimension, string> = { gpus: 'GPUs', cores: 'cores', memory_gib: 'GiB' };

/**
 * `llmgw ctl quota preview`: a guarantee and a limit typed for a scope, and what setting them would
 * change. A GET form: it changes nothing, so it needs no CSRF token and its answer can be linked to.
 */
export async function quotaPreviewPage(ctx: PageContext) {
  const { query } = ctx;
  const tree = await ctx.api.get<TreeNode[]>('/api/v1/tree');
  let answer: QuotaPreviewAnswer | { problem: string } | undefined;
  if (query.scope) {
    answer = await preview(ctx).catch((error: unknown) => {
      if (!(error instanceof ApiRefusal) || error.status >= 500) throw error;
      ctx.status(error.status);
      return { problem: error.message };
    });
  }
  return (
    <Page title="Quota preview" viewer={ctx.viewer} path="/ui/quota-preview">
      <form method="get" class="quota-form">
        <label for="scope">Scope</label>
        <input
          id="scope"
          name="scope"
          list="scopes"
          value={query.scope ?? ''}
          placeholder="team:Acme/ml"
          required
        />
        <datalist id="scopes">
          {flatten(tree).map((node) => (
            <option value={`${node.kind}:${node.path}`} />
          ))}
        </datalist>
        {(['guarantee', 'limit'] as const).map((bound) => (
          <fieldset>
            <legend>{bound === 'guarantee' ? 'Guarantee' : 'Limit'}</legend>
            {DIMENSIONS.map((d) => (
              <label>
                <input name={`${bound}_${d}`} inputmode="decimal" value={query[`${bound}_${d}`] ?? ''} />{' '}
                {UNITS[d]}
              </label>
            ))}
          </fieldset>
        ))}
        <label for="preemption">Preemption</label>
        <select id="preemption" name="preemption">
          {['lower-claim', 'never'].map((p) => (
            <option value={p} selected={query.preemption === p}>
              {p}
            </option>
          ))}
        </select>
        <label for="priority">Priority among its siblings</label>
        <input
          id="priority"
          name="priority"
          inputmode="numeric"
          value={query.priority ?? ''}
          placeholder="0"
        />
        <button type="submit">Preview</button>
      </form>
      {answer && 'problem' in answer ? <Problem sentence={answer.problem} /> : null}
      {answer && 'scope' in answer ? <PreviewAnswer preview={answer} /> : null}
    </Page>
  );
}

/** Asks the API, after reading the form's figures (a field left empty sets nothing). */
async function preview(ctx: PageContext): Promise<QuotaPreviewAnswer | { problem: string }> {
  const resources = (bound: 'guarantee' | 'limit'): Resources | string => {
    const out: Resources = {};
    for (const d of DIMENSIONS) {
      const text = (ctx.query[`${bound}_${d}`] ?? '').trim();
      if (text === '') continue;
      const value = Number(text);
      if (!Number.isFinite(value)) return `the ${bound} of "${text}" ${UNITS[d]} is not a number`;
      out[d] = value;
    }
    return out;
  };
  const guarantee = resources('guarantee');
  const limit = resources('limit');
  const priorityText = (ctx.query.priority ?? '').trim();
  const priority = priorityText === '' ? undefined : Number(priorityText);
  const wrong = [
    guarantee,
    limit,
    priority !== undefined && !Number.isInteger(priority)
      ? `the priority "${priorityText}" is not a whole number`
      : undefined,
  ].find((r) => typeof r === 'string');
  if (wrong !== undefined) {
    ctx.status(400);
    return { problem: wrong as string };
  }
  return ctx.api.post<QuotaPreviewAnswer>('/api/v1/quotas/preview', {
    scope: ctx.query.scope,
    guarantee,
    limit,
    ...(ctx.query.preemption ? { preemption: ctx.query.preemption } : {}),
    ...(priority !== undefined ? { priority } : {}),
  });
}

function PreviewAnswer({ preview }: { preview: QuotaPreviewAnswer }) {
  const none = (list: unknown[]) => (list.length === 0 ? <li>none</li> : null);
  return (
    <section class="preview" data-scope={preview.scope}>
      <h2>If it were set (nothing is saved)</h2>
      <h3>Replicas that would become borrowed</h3>
      <ul data-part="became_borrowed">
        {preview.became_borrowed.map((r) => (
          <li>{r}</li>
        ))}
        {none(preview.became_borrowed)}
      </ul>
      <h3>Replicas that would become protected</h3>
      <ul data-part="became_protected">
        {preview.became_protected.map((r) => (
          <li>{r}</li>
        ))}
        {none(preview.became_protected)}
      </ul>
      <h3>Borrowed replicas that could be reclaimed</h3>
      <ul data-part="reclaimable">
        {preview.reclaimable.map((r) => (
          <li>
            {r.replica} of {r.model}: {formatResources(r.resources)}
          </li>
        ))}
        {none(preview.reclaimable)}
      </ul>
      <h3>Models the limit would block</h3>
      <ul data-part="blocked_models">
        {preview.blocked_models.map((m) => (
          <li>
            {m.model}: {m.why}
            {m.preempts?.length ? ` (it would preempt ${m.preempts.join(', ')})` : ''}
          </li>
        ))}
        {none(preview.blocked_models)}
      </ul>
      <h3>Priority {preview.priority.value} among its siblings</h3>
      <ul data-part="priority">
        <li>below: {preview.priority.above.join(', ') || 'none'}</li>
        <li>equal to: {preview.priority.equal.join(', ') || 'none'}</li>
        <li>above: {preview.priority.below.join(', ') || 'none'}</li>
      </ul>
      {preview.warnings.length > 0 ? (
        <ul class="warnings">
          {preview.warnings.map((w) => (
            <li>{w}</li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

const flatten = (nodes: TreeNode[]): TreeNode[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);
