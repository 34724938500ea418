// Runs the alert rules' own tests (deploy/prometheus/alerts.test.yml) with promtool, which the harness
// finds or installs (scripts/test-tools.sh). A missing promtool is a failure, not a skip: the rules would
// go untested.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { testTool } from '../../support/test-tools.ts';

const root = join(import.meta.dirname, '../../..');
const run = async (...args: string[]) =>
  spawnSync(await testTool('promtool'), args, { cwd: root, encoding: 'utf8' });

describe('deploy/prometheus/alerts.yml', () => {
  it('promtool finds the rules well formed', async () => {
    const check = await run('check', 'rules', 'deploy/prometheus/alerts.yml');
    assert.ifError(check.error);
    assert.equal(check.status, 0, `promtool check rules failed:\n${check.stdout}${check.stderr}`);
  });

  it('every alert fires, and stays silent, where alerts.test.yml says', async () => {
    const test = await run('test', 'rules', 'deploy/prometheus/alerts.test.yml');
    assert.ifError(test.error);
    assert.equal(test.status, 0, `promtool test rules failed:\n${test.stdout}${test.stderr}`);
  });
});
