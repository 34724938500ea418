// Runs the alert rules' own tests (deploy/prometheus/alerts.test.yml) with promtool. A missing
// promtool is a failure, not a skip: the rules would go untested.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '../..');
const run = (...args: string[]) => spawnSync('promtool', args, { cwd: root, encoding: 'utf8' });

describe('deploy/prometheus/alerts.yml', () => {
  it('promtool finds the rules well formed', () => {
    const check = run('check', 'rules', 'deploy/prometheus/alerts.yml');
    assert.ok(!check.error, installHint(check.error));
    assert.equal(check.status, 0, `promtool check rules failed:\n${check.stdout}${check.stderr}`);
  });

  it('every alert fires, and stays silent, where alerts.test.yml says', () => {
    const test = run('test', 'rules', 'deploy/prometheus/alerts.test.yml');
    assert.ok(!test.error, installHint(test.error));
    assert.equal(test.status, 0, `promtool test rules failed:\n${test.stdout}${test.stderr}`);
  });
});

function installHint(error: Error | undefined): string {
  return (
    `cannot run promtool (${error?.message}): install it to test the alert rules, e.g. ` +
    '`apt-get install prometheus` (Debian/Ubuntu; .ci/run does this) or a Prometheus release from ' +
    'https://prometheus.io/download/ with promtool on the PATH'
  );
}
