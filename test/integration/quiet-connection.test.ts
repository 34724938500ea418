// The gateway's Temporal connection (src/cli/quiet-connection.ts) keeps Node's promise hooks off, which
// Connection.connect turns on for good, and its calls still carry the call context the client sets (the
// namespace header). Each connection is made in a fresh process, against the test run's real Temporal.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Services, sharedServices, stopOwnServices } from '../support/services.ts';

const probe = fileURLToPath(new URL('../support/promise-hooks-probe.ts', import.meta.url));

describe("the gateway's Temporal connection", () => {
  let services: Services;
  before(async () => {
    services = await sharedServices();
  });
  after(stopOwnServices);

  const connectIn = async (kind: 'quiet' | 'plain') => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      probe,
      services.temporalAddress,
      kind,
    ]);
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as { hooksOn: boolean; headers: (string | null)[] };
  };

  it('leaves promise hooks off, where Connection.connect turns them on', async () => {
    assert.equal((await connectIn('plain')).hooksOn, true, 'the probe sees the hooks connect turns on');
    assert.equal((await connectIn('quiet')).hooksOn, false);
  });

  it("sends a namespaced call's namespace header, as Connection.connect does", async () => {
    const quiet = await connectIn('quiet');
    const plain = await connectIn('plain');
    // getSystemInfo (the connect check), then DescribeWorkflowExecution in namespace default.
    assert.deepEqual(quiet.headers, [null, 'default']);
    assert.deepEqual(quiet.headers, plain.headers);
  });
});
