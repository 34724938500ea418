import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { seedDemo } from '../../src/cli/demo.ts';
import { ENDED_STATES } from '../../src/domain/cluster.ts';
import { describeRule } from '../../src/domain/runtime-params.ts';
import { pendingSentence } from '../../src/policy/explain.ts';
import { formatAmount, formatNumber, formatResources } from '../../src/policy/resources.ts';
import { sizingOutcome } from '../../src/policy/sizing-words.ts';
import { loadHistory } from '../../src/store/changes.ts';
import { recordNote } from '../../src/store/decisions.ts';
import { cpuNode, FAST, gpuNode, ok } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';
import { launchChromium, signedInPage } from './console-browser.ts';

const SHOTS = join(import.meta.dirname, '..', '..', 'docs', 'console');
const DIMS = ['gpus', 'cores', 'memory_gib'] as const;

/** The demo's cluster (src/cli/demo.ts): two H100 nodes of 8 GPUs, two L4 nodes of 4, two CPU nodes. */
const DEMO_NODES = [
  gpuNode('h100-1', 8),
  gpuNode('h100-2', 8),
  gpuNode('l4-1', 4, 'L4'),
  gpuNode('l4-2', 4, 'L4'),
  cpuNode('cpu-1', 64),
  cpuNode('cpu-2', 64),
];

/** The text of the element matching `selector`, spaces made single. */
const textOf = async (page: Page, selector: string) =>
  ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

describe('the web console, in headless Chromium, on the demo data', () => {
  let stack: Stack;
  let browser: Browser;
  let admin: Page;
  let viewerToken: string;

  before(async () => {
    browser = await launchChromium();
    stack = await startStack({ worker: true, nodes: DEMO_NODES, env: FAST });
    await seedDemo((method, path, body) => ok(stack, method, path, body));
    // Projects guaranteed more than their team (an admin may, warned), for the Tree's flag.
    for (const [name, gpus] of [
      ['training', 6],
      ['eval', 4],
    ] as const) {
      await ok(stack, 'POST', '/api/v1/projects', { team: 'Acme/ml', name });
      await ok(stack, 'PUT', '/api/v1/quotas', { scope: `project:Acme/ml/${name}`, guarantee: { gpus } });
    }
    // The demo's first phase: code borrows up to web's limit of 12 GPUs (6 replicas).
    for (const [model, inFlight] of Object.entries({ code: 80, chat: 30, embed: 40 })) {
      await ok(stack, 'POST', `/api/v1/models/${model}/load`, { in_flight: inFlight, source: 'test' });
    }
    await eventually('every demo model serving', async () => {
      const models = await ok<{ name: string; replicas: Record<string, number> }[]>(
        stack,
        'GET',
        '/api/v1/models',
      );
      const ready = Object.fromEntries(models.map((m) => [m.name, m.replicas.ready]));
      return ready.code === 6 && ready.chat >= 1 && ready.embed >= 1;
    });
    viewerToken = await stack.token({ name: 'ml-viewer', role: 'viewer', scope: 'team:Acme/ml' });
    admin = await signedInPage(browser, stack.url, stack.adminToken);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('signs in into an HttpOnly, SameSite=Strict cookie, and refuses a bad token with one sentence', async () => {
    const [cookie] = await admin.context().cookies();
    assert.equal(cookie?.name, 'llmgw_session');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.secure, false, 'Secure only over TLS');

    const form = new URLSearchParams({ token: 'not-a-token' });
    const refused = await fetch(`${stack.url}/ui/sign-in`, {
      method: 'POST',
      body: form,
      headers: { origin: stack.url },
      redirect: 'manual',
    });
    assert.equal(refused.status, 401);
    assert.match(await refused.text(), /this token is unknown, was revoked or expired/);
    // A form posted from another site is refused (CSRF).
    const forged = await fetch(`${stack.url}/ui/sign-in`, {
      method: 'POST',
      body: form,
      headers: { origin: 'https://elsewhere.example' },
      redirect: 'manual',
    });
    assert.equal(forged.status, 403);
    const unsigned = await fetch(`${stack.url}/ui/models`, { redirect: 'manual' });
    assert.equal(unsigned.status, 303);
    assert.equal(unsigned.headers.get('location'), '/ui/sign-in');
  });

  it('Tree: each scope with the holds, borrowed, guarantee and limit the API gives', async () => {
    const tree = await ok<any[]>(stack, 'GET', '/api/v1/tree');
    await admin.goto(`${stack.url}/ui/tree`);
    const flat = (nodes: any[]): any[] => nodes.flatMap((n) => [n, ...flat(n.children)]);
    let borrowedShown = 0;
    for (const node of flat(tree)) {
      const item = `li.scope:has(> .scope-head [data-scope="${node.scope}"])`;
      const text = await textOf(admin, `${item} > .scope-head`);
      assert.match(text, new RegExp(node.name));
      // A bar for each dimension a quota sets or the scope holds, with or without a quota.
      const { guarantee = {}, limit = {} } = node.quota ?? {};
      const shown = DIMS.filter(
        (d) => guarantee[d] !== undefined || limit[d] !== undefined || node.holds[d] > 0,
      );
      assert.deepEqual(
        await admin.locator(`${item} > .bar-row`).evaluateAll((rows) => rows.map((r) => r.dataset.dimension)),
        shown,
        node.path,
      );
      for (const d of shown) {
        const bar = await textOf(admin, `${item} > .bar-row[data-dimension=${d}] .figures`);
        const expected = [
          `holds ${formatAmount(d, node.holds[d])}`,
          ...(node.borrowed[d] > 0 ? [`${formatAmount(d, node.borrowed[d])} borrowed`] : []),
          ...(guarantee[d] !== undefined ? [`guarantee ${formatAmount(d, guarantee[d])}`] : []),
          ...(limit[d] !== undefined ? [`limit ${formatAmount(d, limit[d])}`] : []),
        ];
        assert.equal(bar, expected.join(' · '), `${node.path} ${d}`);
        if (node.borrowed[d] > 0) borrowedShown++;
      }
    }
    assert.ok(borrowedShown > 0, 'code borrows beyond web, so some scope shows a borrowed share');
    assert.match(await textOf(admin, 'li.scope.at-limit .scope-head'), /web .*at its limit of 12 GPUs/);
    assert.match(
      await textOf(admin, 'li.scope.overcommitted .scope-head'),
      /ml .*guarantees overcommitted: children guaranteed 10 GPUs of 8 GPUs/,
    );
    await admin.screenshot({ path: join(SHOTS, 'tree.png'), fullPage: true });
  });

  /**
   * The model's sparkline draws its decisions of the hour (all of the stack's, younger than that) and
   * now's figures: as many points as the API has decisions with figures, scaled to the highest figure,
   * and ending at the load and capacity GET /api/v1/models gives.
   */
  async function sparklineAgrees(model: any) {
    const decisions = await ok<any[]>(stack, 'GET', `/api/v1/models/${model.name}/decisions?limit=1000`);
    const points = decisions
      .filter((d) => d.inputs.capacity_at_slo !== undefined)
      .map((d) => ({ in_flight: d.inputs.in_flight ?? 0, capacity: d.inputs.capacity_at_slo }));
    points.push({ in_flight: model.in_flight ?? 0, capacity: model.capacity_at_slo });
    const top = Math.max(1, ...points.map((p) => Math.max(p.in_flight, p.capacity)));
    const svg = `tr[data-model="${model.name}"] svg.sparkline`;
    assert.equal(
      await admin.locator(svg).getAttribute('aria-label'),
      `the last hour: ${points.length - 1} decisions, at most ${top} in flight or at SLO`,
    );
    // The sparkline is 120 by 28, drawn 2 from its top and bottom: its lines end at now's figures.
    const y = (value: number) => (26 - (24 * value) / top).toFixed(1);
    const end = async (line: string) =>
      ((await admin.locator(`${svg} polyline.${line}`).getAttribute('points')) ?? '').split(' ').at(-1);
    assert.equal(await end('load'), `120.0,${y(model.in_flight ?? 0)}`, model.name);
    assert.equal(await end('capacity'), `120.0,${y(model.capacity_at_slo)}`, model.name);
  }

  it('Models: replicas by state, load against capacity and the last decision, as GET /api/v1/models', async () => {
    await eventually('the Models page agreeing with the API', async () => {
      const models = await ok<any[]>(stack, 'GET', '/api/v1/models');
      await admin.goto(`${stack.url}/ui/models`);
      for (const model of models) {
        const row = await textOf(admin, `tr[data-model="${model.name}"]`);
        const counts = Object.entries(model.replicas as Record<string, number>)
          .filter(([, n]) => n > 0)
          .map(([state, n]) => `${n} ${state}`)
          .join(', ');
        assert.ok(row.includes(counts), `${model.name}: "${counts}" in "${row}"`);
        assert.ok(row.includes(`${model.in_flight} in flight of ${model.capacity_at_slo} at SLO`), row);
        assert.ok(row.includes(model.last_decision.reason), row);
        const pending = model.last_decision.inputs.pending ?? [];
        if (pending.length > 0) assert.ok(row.includes(`waiting: ${pendingSentence(pending)}`), row);
        else assert.ok(!row.includes('waiting:'), row);
        await sparklineAgrees(model);
      }
      assert.ok(
        models.some((m) => (m.last_decision.inputs.pending ?? []).length > 0),
        "code waits at web's limit: a reason to show",
      );
      // Each reconciler in the Temporal UI: its workflow ID, in the namespace the stack runs in.
      assert.equal(
        await admin.locator('tr[data-model="chat"] a.small').getAttribute('href'),
        `http://localhost:8233/namespaces/${stack.config.temporalNamespace}/workflows?query=${encodeURIComponent('WorkflowId="reconcile:chat"')}`,
      );
      return true;
    });
    await admin.screenshot({ path: join(SHOTS, 'models.png'), fullPage: true });
    // On a phone the table turns into cards of labelled lines: nothing scrolls sideways.
    const phone = await browser.newPage({
      viewport: { width: 390, height: 844 },
      storageState: await admin.context().storageState(),
    });
    await phone.goto(`${stack.url}/ui/models`);
    assert.equal(
      await phone.evaluate(() => document.body.scrollWidth <= window.innerWidth),
      true,
      'no sideways page',
    );
    await phone.screenshot({ path: join(SHOTS, 'models-phone.png'), fullPage: true });
    await phone.close();
  });

  it("reads the last hour of the models the page shows only, not every model's", async () => {
    // What the Models page asks the store for a viewer who sees chat alone; code and embed have hours too.
    const hour = await loadHistory(stack.sql, Date.now() - 3600_000, ['chat']);
    assert.deepEqual([...hour.keys()], ['chat']);
    assert.deepEqual([...(await loadHistory(stack.sql, Date.now() - 3600_000, [])).keys()], []);
  });

  it('works with JavaScript off: sign-in, pages and the read-only preview form are plain HTML', async () => {
    const page = await signedInPage(browser, stack.url, stack.adminToken, { javaScriptEnabled: false });
    try {
      const models = await ok<any[]>(stack, 'GET', '/api/v1/models');
      await page.goto(`${stack.url}/ui/models`);
      assert.equal(await page.locator('tr[data-model]').count(), models.length);
      for (const model of models) {
        assert.ok((await textOf(page, `tr[data-model="${model.name}"]`)).includes(model.name));
      }
      await page.goto(`${stack.url}/ui/models/chat`);
      await page.fill('input[name=tokens_per_sec]', '5000');
      await Promise.all([page.waitForURL(/tokens_per_sec=5000/), page.click('form[method=get] button')]);
      assert.match(await textOf(page, 'main'), /reaches [\d.]+ of 5000 tokens\/s: (fits|does not fit)/);
    } finally {
      await page.context().close();
    }
  });

  it('One model: its timeline, replicas, profiles in order, and a target preview as the API plans it', async () => {
    await eventually('the chat page agreeing with the API', async () => {
      const [decisions, replicas] = await Promise.all([
        ok<any[]>(stack, 'GET', '/api/v1/models/chat/decisions?limit=50'),
        ok<any[]>(stack, 'GET', '/api/v1/replicas?model=chat'),
      ]);
      await admin.goto(`${stack.url}/ui/models/chat`);
      const timeline = await admin.locator('.timeline li').allTextContents();
      assert.equal(timeline.length, decisions.length);
      assert.ok(timeline[0]!.includes(decisions[0].reason));
      const active = replicas.filter((r) => !ENDED_STATES.includes(r.state));
      assert.equal(await admin.locator('tr[data-replica]').count(), active.length);
      for (const r of active) {
        const row = await textOf(admin, `tr[data-replica="${r.id}"]`);
        assert.ok(row.includes(r.node) && row.includes(r.profile), row);
        assert.ok(row.includes(r.protected ? 'protected' : 'borrowed'), row);
        assert.ok(row.includes(formatResources(r.resources)), row);
        assert.ok(row.includes(r.endpoint ?? 'none yet'), row);
      }
      assert.ok(
        active.some((r) => r.endpoint),
        "chat's ready sim replicas serve: an endpoint to show",
      );
      return true;
    });
    // Each profile's measurement, as GET /api/v1/measurements gives it.
    const measurements = await ok<any[]>(stack, 'GET', '/api/v1/measurements?model=chat');
    assert.ok(measurements.length > 0, 'the demo measures chat');
    for (const m of measurements) {
      assert.ok(
        (await textOf(admin, `.profiles li[data-profile="${m.profile}"]`)).includes(
          `measured ${m.max_concurrency_at_slo} requests at SLO, ${m.throughput_tok_per_sec} tokens/s`,
        ),
        m.profile,
      );
    }
    // Measured tokens/s per GPU puts the H100 profile first (it has the higher priority too).
    assert.deepEqual(
      await admin.locator('.profiles li').evaluateAll((l) => l.map((e) => e.dataset.profile)),
      ['vllm-h100', 'vllm-l4'],
    );
    const plan = await ok<any>(stack, 'POST', '/api/v1/models/chat/target', { tokens_per_sec: 5000 });
    await admin.fill('#tokens_per_sec', '5000');
    await Promise.all([admin.waitForURL(/tokens_per_sec=5000/), admin.click('.target button')]);
    // In the words and order of `llmgw ctl model target`, from the same function.
    const steps = await admin.locator('.plan .steps li').allTextContents();
    assert.deepEqual(
      steps,
      plan.plan.map((s: any) => `${s.replicas} of ${s.profile}: ${formatNumber(s.tokens_per_sec)} tokens/s`),
    );
    assert.deepEqual(await admin.locator('.plan .outcome li').allTextContents(), sizingOutcome(plan, 5000));
    await admin.screenshot({ path: join(SHOTS, 'model.png'), fullPage: true });
    const bad = await fetch(`${stack.url}/ui/models/chat?tokens_per_sec=fast`, {
      headers: { cookie: await sessionCookie(admin) },
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /&quot;fast&quot; is not a throughput: give tokens per second above 0/);
  });

  it('Nodes: capacity, allocated and reserved per dimension and the replicas on each, as GET /api/v1/nodes', async () => {
    await eventually('the Nodes page agreeing with the API', async () => {
      const [nodes, replicas] = await Promise.all([
        ok<any[]>(stack, 'GET', '/api/v1/nodes'),
        ok<any[]>(stack, 'GET', '/api/v1/replicas'),
      ]);
      await admin.goto(`${stack.url}/ui/nodes`);
      for (const node of nodes) {
        for (const d of DIMS) {
          if (node.capacity[d] === undefined) continue;
          const bar = await textOf(
            admin,
            `[data-node="${node.name}"] .bar-row[data-dimension=${d}] .figures`,
          );
          assert.equal(
            bar,
            `${formatAmount(d, node.allocated[d])} allocated, ${formatAmount(d, node.reserved[d])} reserved, of ${formatAmount(d, node.capacity[d])}`,
          );
        }
        const here = replicas.filter((r) => r.node === node.name && !ENDED_STATES.includes(r.state));
        assert.equal(await admin.locator(`[data-node="${node.name}"] .on-node li`).count(), here.length);
      }
      return true;
    });
    await admin.screenshot({ path: join(SHOTS, 'nodes.png'), fullPage: true });
  });

  it("Runtimes: each one's kind, command line, parameters' rules and variables; values to admins only", async () => {
    await ok(stack, 'PUT', '/api/v1/runtimes/vllm-qwen', {
      kind: 'vllm',
      model: '{params.model}',
      args: ['--max-model-len', '{params.max_model_len}'],
      env: { VLLM_LOGGING_LEVEL: 'DEBUG' },
      secret_env: { HF_TOKEN: 'hf-token' },
      params: {
        model: { type: 'string', prefix: 'Qwen/' },
        max_model_len: { type: 'integer', min: 1024, max: 32768, default: 8192 },
      },
    });
    const runtimes = await ok<any[]>(stack, 'GET', '/api/v1/runtimes');
    assert.deepEqual(
      runtimes.map((r) => r.name),
      ['sim', 'vllm-qwen'],
      'the demo runs through its sim runtime',
    );
    const viewer = await signedInPage(browser, stack.url, viewerToken);
    try {
      for (const [page, value] of [
        [admin, 'DEBUG'],
        [viewer, '(hidden)'],
      ] as const) {
        await page.goto(`${stack.url}/ui/runtimes`);
        assert.equal(await page.locator('nav a[href="/ui/runtimes"]').count(), 1);
        for (const runtime of runtimes) {
          const row = `[data-runtime="${runtime.name}"]`;
          assert.equal(await textOf(page, `${row} .kind`), runtime.kind);
          for (const [name, rule] of Object.entries<any>(runtime.params ?? {}))
            assert.equal(
              await textOf(page, `${row} [data-param="${name}"]`),
              `${name}: ${describeRule(rule)}`,
            );
        }
        const row = '[data-runtime="vllm-qwen"]';
        assert.equal(
          await textOf(page, `${row} .runs`),
          '{params.model} --max-model-len {params.max_model_len}',
        );
        assert.equal(
          await textOf(page, `${row} [data-env="VLLM_LOGGING_LEVEL"]`),
          `VLLM_LOGGING_LEVEL=${value}`,
        );
        assert.equal(
          await textOf(page, `${row} [data-env="HF_TOKEN"]`),
          "HF_TOKEN from the node's secret hf-token",
        );
      }
      assert.ok(!(await viewer.content()).includes('DEBUG'), 'a viewer never reads the value');
      await admin.screenshot({ path: join(SHOTS, 'runtimes.png'), fullPage: true });
    } finally {
      await viewer.context().close();
    }
  });

  it('Quota preview: what POST /api/v1/quotas/preview says, saving nothing; bad input is a 400 sentence', async () => {
    const body = { scope: 'team:Acme/ml', guarantee: { gpus: 2 }, limit: { gpus: 16 } };
    const expected = await ok<any>(stack, 'POST', '/api/v1/quotas/preview', body);
    const before = await ok<any>(stack, 'GET', '/api/v1/quotas/team:Acme%2Fml');
    await admin.goto(`${stack.url}/ui/quota-preview`);
    await admin.fill('#scope', 'team:Acme/ml');
    await admin.fill('input[name=guarantee_gpus]', '2');
    await admin.fill('input[name=limit_gpus]', '16');
    await Promise.all([admin.waitForURL(/scope=/), admin.click('.quota-form button')]);
    for (const part of ['became_borrowed', 'became_protected'] as const) {
      const items = await admin.locator(`[data-part=${part}] li`).allTextContents();
      assert.deepEqual(items, expected[part].length > 0 ? expected[part] : ['none']);
    }
    const reclaimable = await admin.locator('[data-part=reclaimable] li').allTextContents();
    for (const [i, r] of expected.reclaimable.entries())
      assert.ok(reclaimable[i]!.startsWith(`${r.replica} of ${r.model}`));
    const blocked = await admin.locator('[data-part=blocked_models] li').allTextContents();
    assert.equal(blocked.length, Math.max(1, expected.blocked_models.length));
    for (const [i, m] of expected.blocked_models.entries())
      assert.ok(blocked[i]!.startsWith(`${m.model}: ${m.why}`));
    // Guaranteed 2 GPUs, team ml would have granted its projects 10.
    assert.ok(expected.warnings.length > 0, 'the preview warns');
    assert.deepEqual(await admin.locator('.preview .warnings li').allTextContents(), expected.warnings);
    await admin.screenshot({ path: join(SHOTS, 'quota-preview.png'), fullPage: true });
    assert.ok(expected.became_borrowed.length > 0, 'the preview has something to show');
    assert.deepEqual(await ok(stack, 'GET', '/api/v1/quotas/team:Acme%2Fml'), before, 'nothing saved');

    const cookie = await sessionCookie(admin);
    const bad = await fetch(`${stack.url}/ui/quota-preview?scope=team:Acme/web&limit_gpus=two`, {
      headers: { cookie },
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /the limit of &quot;two&quot; GPUs is not a number/);
    const missing = await fetch(`${stack.url}/ui/quota-preview?scope=team:nowhere&limit_gpus=1`, {
      headers: { cookie },
    });
    assert.equal(missing.status, 400);
    assert.match(await missing.text(), /there is no team/);
  });

  it('signs out with its button, and refuses a sign-out posted from another site (CSRF)', async () => {
    const page = await signedInPage(browser, stack.url, stack.adminToken);
    try {
      const cookie = await sessionCookie(page);
      // Another site's page posting to /ui/sign-out with the browser's cookie: refused, still signed in.
      const forged = await fetch(`${stack.url}/ui/sign-out`, {
        method: 'POST',
        headers: {
          cookie,
          origin: 'https://elsewhere.example',
          'sec-fetch-site': 'cross-site',
          'content-type': 'application/x-www-form-urlencoded',
        },
        redirect: 'manual',
      });
      assert.equal(forged.status, 403);
      assert.equal(forged.headers.get('set-cookie'), null);
      assert.equal(
        (await fetch(`${stack.url}/ui/models`, { headers: { cookie }, redirect: 'manual' })).status,
        200,
      );

      await Promise.all([page.waitForURL(/\/ui\/sign-in$/), page.click('form.who button')]);
      assert.deepEqual(await page.context().cookies(), []);
      await page.goto(`${stack.url}/ui/models`);
      assert.match(page.url(), /\/ui\/sign-in$/);
    } finally {
      await page.context().close();
    }
  });

  it('a viewer bound to team Acme / ml sees no other team anywhere', async () => {
    const viewer = await signedInPage(browser, stack.url, viewerToken);
    const web = await ok<any[]>(stack, 'GET', '/api/v1/teams').then((teams) =>
      teams.find((t) => t.name === 'web'),
    );
    for (const path of ['/ui/tree', '/ui/models', '/ui/nodes', '/ui/models/chat']) {
      await viewer.goto(`${stack.url}${path}`);
      const html = await viewer.content();
      const text = await textOf(viewer, 'main');
      for (const other of ['web', web.id, 'code', 'embed']) {
        assert.ok(!text.includes(other) && !html.includes(other), `${path} names "${other}"`);
      }
      assert.ok(text.includes(path === '/ui/tree' ? 'training' : 'chat'), `${path} shows team ml's own`);
    }
    await viewer.goto(`${stack.url}/ui/models/code`);
    assert.match(await textOf(viewer, 'main'), /there is no model "code"/);
    // Quota preview is for roles that change quotas: neither in the menu nor open.
    assert.equal(await viewer.locator('nav a[href="/ui/quota-preview"]').count(), 0);
    const refused = await viewer.goto(`${stack.url}/ui/quota-preview`);
    assert.equal(refused?.status(), 403);
    // A revoked token signs the console out at its next page, as it stops the API at once.
    await ok(stack, 'DELETE', '/api/v1/tokens/ml-viewer');
    await viewer.goto(`${stack.url}/ui/models`);
    assert.match(viewer.url(), /\/ui\/sign-in$/);
    assert.deepEqual(await viewer.context().cookies(), []);
    await viewer.context().close();
  });

  it("GET /api/v1/events sends a team's viewer its decisions, replica changes and load zones, no other's", async () => {
    // The first viewer's token is revoked by now.
    const streamToken = await stack.token({ name: 'ml-viewer-2', role: 'viewer', scope: 'team:Acme/ml' });
    const controller = new AbortController();
    // A stream that never brings the changes fails the test in 15 s rather than hang it.
    const give = setTimeout(
      () => controller.abort(new Error('the changes did not come within 15 s')),
      15_000,
    );
    const answer = await fetch(`${stack.url}/api/v1/events`, {
      headers: { authorization: `Bearer ${streamToken}` },
      signal: controller.signal,
    });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /text\/event-stream/);
    const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read().catch((error) => {
          throw new Error(`${error.message}: no ${pattern} in\n${text.slice(-3000)}`);
        });
        if (done) throw new Error(`the stream ended before ${pattern}: ${text}`);
        text += value;
      }
    };
    await readUntil(/event: ready/);
    await recordNote(stack.sql, 'code', 'note', 'a note of code, in team web');
    await recordNote(stack.sql, 'chat', 'note', 'a note of chat, in team ml');
    await readUntil(/a note of chat/);
    assert.match(text, /event: decision\ndata: \{"model":"chat"/);
    // A burst chat cannot meet (8 replicas at most) stays above its capacity, however it scales;
    // code's calm moves it too, out of the viewer's sight.
    await ok(stack, 'POST', '/api/v1/models/chat/load', { in_flight: 1000, source: 'test' });
    await ok(stack, 'POST', '/api/v1/models/code/load', { in_flight: 5, source: 'test' });
    await readUntil(/event: load\ndata: \{"model":"chat","zone":"above"/);
    await readUntil(/event: replica\ndata: \{"id":"r-[0-9a-f]{16}","model":"chat"/);
    clearTimeout(give);
    controller.abort();
    assert.doesNotMatch(text, /"model":"(code|embed)"|"owner"/);
    await ok(stack, 'POST', '/api/v1/models/chat/load', { in_flight: 30, source: 'test' });
  });

  it("live updates: a new decision shows within 2 s, with no reload, on the Models page and a model's", async () => {
    // embed is steady (its last decision stays the newest); chat's timeline keeps the note among others.
    for (const [path, model] of [
      ['/ui/models', 'embed'],
      ['/ui/models/chat', 'chat'],
    ] as const) {
      await admin.goto(`${stack.url}${path}`);
      await admin.waitForSelector('main[data-stream=open]');
      await admin.evaluate(() => {
        (window as any).notReloaded = true;
      });
      const reason = `a decision of ${model} the test recorded at ${Date.now()}`;
      const recorded = Date.now();
      await recordNote(stack.sql, model, 'note', reason);
      await admin.waitForFunction(
        (text) => document.querySelector('main')?.textContent?.includes(text),
        reason,
        {
          timeout: 2000,
        },
      );
      const took = Date.now() - recorded;
      assert.equal(await admin.evaluate(() => (window as any).notReloaded), true, `${path} was not reloaded`);
      console.log(`console: a new decision showed on ${path} after ${took} ms`);
      assert.ok(took < 2000);
    }
  });
});

async function sessionCookie(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  return cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}
