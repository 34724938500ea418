/**
 * A self-contained reference page built in the browser from /openapi.json (no CDN: the control plane
 * may run where nothing outside is reachable).
 */
export const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>llmgw API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#1d1d1f}
h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
.op{margin:.8em 0;padding:.6em .8em;border:1px solid #e3e3e3;border-radius:6px}
.m{display:inline-block;min-width:4.5em;font-weight:600;font-family:ui-monospace,monospace}
code,pre{font-family:ui-monospace,monospace;font-size:13px}
pre{background:#f6f8fa;padding:.6em;overflow:auto;border-radius:4px}
details summary{cursor:pointer;color:#555}
</style></head><body>
<h1>llmgw API</h1>
<p>The machine-readable description is at <a href="/openapi.json">/openapi.json</a>.</p>
<div id="ops">Loading…</div>
<script>
fetch('/openapi.json').then(r => r.json()).then(doc => {
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(ops)) {
    const tag = (op.tags || ['other'])[0]; (byTag[tag] ||= []).push({ path, method, op });
  }
  const el = document.getElementById('ops'); el.textContent = '';
  const esc = s => String(s).replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
  for (const [tag, ops] of Object.entries(byTag)) {
    let html = '<h2>' + esc(tag) + '</h2>';
    for (const { path, method, op } of ops) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      html += '<div class="op"><span class="m">' + method.toUpperCase() + '</span> <code>' + esc(path) + '</code><br>' +
        esc(op.summary || '') + ' <small>(' + Object.keys(op.responses || {}).join(', ') + ')</small>' +
        (body ? '<details><summary>request body</summary><pre>' + esc(JSON.stringify(body, null, 2)) + '</pre></details>' : '') +
        '</div>';
    }
    el.insertAdjacentHTML('beforeend', html);
  }
  const schemas = doc.components?.schemas || {};
  el.insertAdjacentHTML('beforeend', '<h2>schemas</h2>' + Object.entries(schemas).map(([n, s]) =>
    '<details><summary>' + esc(n) + '</summary><pre>' + esc(JSON.stringify(s, null, 2)) + '</pre></details>').join(''));
});
</script></body></html>`;
