// The console's two settings as readConfig reads them from the environment.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../../src/config.ts';

describe("the console's settings", () => {
  it('LLMGW_TEMPORAL_UI_URL: by default the local UI port; an http(s) URL only, without its trailing slash', () => {
    assert.equal(readConfig({}).temporalUiUrl, 'http://localhost:8233');
    assert.equal(readConfig({ LLMGW_TEMPORAL_UI_PORT: '9233' }).temporalUiUrl, 'http://localhost:9233');
    const given = readConfig({ LLMGW_TEMPORAL_UI_URL: 'https://temporal.example.com/ui/' });
    assert.equal(given.temporalUiUrl, 'https://temporal.example.com/ui');
    // It becomes the href of every reconciler link: nothing that a browser would run.
    for (const bad of ['javascript:alert(1)', 'temporal.example.com', 'https://a.example/"><script>'])
      assert.throws(() => readConfig({ LLMGW_TEMPORAL_UI_URL: bad }), ConfigError, bad);
  });

  it('LLMGW_TRUST_PROXY: off unless 1; anything but 0 or 1 is refused', () => {
    assert.equal(readConfig({}).trustProxy, false);
    assert.equal(readConfig({ LLMGW_TRUST_PROXY: '0' }).trustProxy, false);
    assert.equal(readConfig({ LLMGW_TRUST_PROXY: '1' }).trustProxy, true);
    assert.throws(
      () => readConfig({ LLMGW_TRUST_PROXY: 'yes' }),
      /LLMGW_TRUST_PROXY=yes must be 1 \(on\) or 0 \(off\)/,
    );
  });
});
