import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { COMMANDS, runCtlCapturing } from '../../src/cli/ctl/index.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('llmgw ctl: help, global options and exit codes', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it('lists every command on --help (exit 0) and without a command (exit 2)', async () => {
    const help = await runCtlCapturing(['--help']);
    assert.equal(help.code, 0);
    for (const command of COMMANDS) assert.ok(help.stdout.includes(`  ${command.path}`), command.path);
    assert.match(help.stdout, /Exit codes: 0 done, 1 refused by the server/);
    const none = await runCtlCapturing([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^llmgw ctl: give a command\n\nusage: llmgw ctl COMMAND/);
  });

  it('gives every command a --help with its usage, options and examples', async () => {
    for (const command of COMMANDS) {
      const help = await runCtlCapturing([...command.path.split(' '), '--help']);
      assert.equal(help.code, 0, command.path);
      assert.match(help.stdout, new RegExp(`^usage: llmgw ctl ${command.path}`), command.path);
      assert.match(help.stdout, /\nexamples:\n {2}llmgw ctl /, command.path);
      assert.match(help.stdout, /\nglobal options:\n {2}--server URL/, command.path);
    }
    const family = await runCtlCapturing(['model', '-h']);
    assert.equal(family.code, 0);
    assert.match(
      family.stdout,
      /^usage: llmgw ctl model COMMAND \[options\]\n\nThe model commands of llmgw ctl\./,
    );
  });

  it('exits 2 on an unknown command, an unknown option or an unknown output format', async () => {
    const unknown = await runCtlCapturing(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^llmgw ctl: unknown command "frobnicate"/);
    const sub = await runCtlCapturing(['quota', 'frob']);
    assert.equal(sub.code, 2);
    assert.match(sub.stderr, /^llmgw ctl: unknown command "quota frob"\n\nusage: llmgw ctl quota COMMAND/);
    const option = await runCtlCapturing(['org', 'list', '--colour']);
    assert.equal(option.code, 2);
    assert.equal(
      option.stderr,
      'llmgw ctl org list: unknown option --colour\nusage: llmgw ctl org list\nRun llmgw ctl org list --help for more.\n',
    );
    const format = await runCtlCapturing(['org', 'list', '-o', 'xml', '--server', stack.url]);
    assert.equal(format.code, 2);
    assert.match(format.stderr, /-o xml: the format is one of table, json, yaml/);
  });

  it('takes the server from LLMGW_URL, and --server over it', async () => {
    const fromEnv = await runCtlCapturing(['org', 'list'], {
      LLMGW_URL: stack.url,
      LLMGW_TOKEN: stack.adminToken,
    });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal(fromEnv.stdout, 'no orgs\n');
    const flag = await runCtlCapturing(['org', 'list', '--server', stack.url], {
      LLMGW_URL: 'http://127.0.0.1:9',
      LLMGW_TOKEN: stack.adminToken,
    });
    assert.equal(flag.code, 0, flag.stderr);
  });

  it('exits 1 when the server cannot be reached, saying where it looked', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const down = await runCtlCapturing(['tree', '--server', url]);
    assert.equal(down.code, 1);
    assert.match(down.stderr, new RegExp(`^cannot reach llmgw at ${url}: .*ECONNREFUSED`));
  });

  it('sends the token as a bearer and prints a refusal sentence as is', async () => {
    let seen: IncomingHttpHeaders = {};
    const guarded = createServer((req, res) => {
      seen = req.headers;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'the token is not valid; ask an admin for a new one' }));
    });
    await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(guarded.address() as AddressInfo).port}`;
    try {
      const refused = await runCtlCapturing(['--server', url, 'org', 'list'], { LLMGW_TOKEN: 'secret-1' });
      assert.equal(refused.code, 1);
      assert.equal(refused.stderr, 'the token is not valid; ask an admin for a new one\n');
      assert.equal(seen.authorization, 'Bearer secret-1');
      await runCtlCapturing(['--server', url, '--token', 'secret-2', 'org', 'list'], {
        LLMGW_TOKEN: 'secret-1',
      });
      assert.equal(seen.authorization, 'Bearer secret-2');
    } finally {
      await new Promise((resolve) => guarded.close(resolve));
    }
  });

  it('runs as `llmgw ctl`, exiting with its code once its output is written', async () => {
    const llmgw = join(import.meta.dirname, '../../bin/llmgw.mjs');
    const run = (...argv: string[]) =>
      promisify(execFile)(process.execPath, [llmgw, 'ctl', ...argv]).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const listed = await run('org', 'list', '--server', stack.url, '--token', stack.adminToken, '-o', 'json');
    assert.deepEqual(listed, { code: 0, stdout: '[]\n' });
    assert.equal((await run('quota')).code, 2);
    assert.equal(
      (await run('model', 'get', 'nope', '--server', stack.url, '--token', stack.adminToken)).code,
      1,
    );
  });
});
