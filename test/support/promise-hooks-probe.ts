// Run alone (a fresh process has no promise hooks on): connects to the Temporal at argv[2] as the
// gateway does (`quiet`) or with Connection.connect (`plain`), makes a namespaced call, and prints
// whether promise hooks are on afterwards and the namespace header each call carried.
// Used by test/integration/quiet-connection.test.ts.
import { executionAsyncId } from 'node:async_hooks';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { QuietConnection } from '../../src/cli/quiet-connection.ts';

const [address, kind] = process.argv.slice(2);
const headers: (string | null)[] = [];
// Sees each call's metadata as the client sends it.
const recordNamespace: Interceptor = (options, next) =>
  new InterceptingCall(next(options), {
    start(metadata, listener, start) {
      const [namespace] = metadata.get('temporal-namespace');
      headers.push(namespace === undefined ? null : String(namespace));
      start(metadata, listener);
    },
  });
const options = { address, interceptors: [recordNamespace] };
const connection = kind === 'quiet' ? await QuietConnection.open(options) : await Connection.connect(options);
const client = new Client({ connection, namespace: 'default' });
try {
  await client.workflow.getHandle('quiet-connection-probe-none').describe();
} catch (error) {
  if (!(error instanceof WorkflowNotFoundError)) throw error;
}
// With promise hooks on, a promise's continuation runs in an async resource of its own (an ID above 0).
const before = executionAsyncId();
await null;
const hooksOn = executionAsyncId() !== 0 || before !== 0;
await connection.close();
console.log(JSON.stringify({ hooksOn, headers }));
