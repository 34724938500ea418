// Which commands stop when the process that started them exits (src/cli/parent-watch.ts): an agent
// started in the background by a script must outlive the script's shell (issue 31).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stopsWithParent } from '../../../src/cli/parent-watch.ts';

describe('stopping with the parent process', () => {
  it('an agent never does: started with setsid, &, npx or systemd, it outlives whatever started it', () => {
    for (const npm_command of [undefined, 'exec', 'run-script', 'start'])
      assert.equal(stopsWithParent('agent', { npm_command }), false, String(npm_command));
  });

  it('the other commands do under an npm script only (npm may exit on Ctrl-C without passing it on)', () => {
    assert.equal(stopsWithParent('dev', { npm_command: 'start' }), true);
    assert.equal(stopsWithParent('serve', { npm_command: 'run-script' }), true);
    assert.equal(stopsWithParent('serve', {}), false, 'systemd, compose, a shell');
    assert.equal(stopsWithParent('gateway', { npm_command: 'exec' }), false, 'npx');
  });
});
