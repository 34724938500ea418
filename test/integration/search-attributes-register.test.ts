// On a Temporal that is not ours, llmgw registers its search attributes at start (the worker and the
// API both do, so several at once must agree), and stops with the commands to run where the server
// refuses. Against a real dev server started without them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import type { TemporalDevServer } from '../../src/cli/dev/temporal-server.ts';
import {
  ensureSearchAttributes,
  lackedSearchAttributes,
} from '../../src/reconcilers/search-attribute-check.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/search-attributes.ts';
import { crowdedNamespace, startForeignTemporal } from '../support/split-stack.ts';

describe("llmgw's search attributes on a Temporal that is not ours", () => {
  let temporal: TemporalDevServer;
  let connection: Connection;
  before(async () => {
    temporal = await startForeignTemporal();
    connection = await Connection.connect({ address: temporal.address });
  });
  after(async () => {
    await connection?.close();
    await temporal?.stop();
  });

  const lacked = async (namespace: string) =>
    (await lackedSearchAttributes(connection.operatorService, namespace)).map((key) => key.name);

  it('registers the missing ones, once however many processes start together', async () => {
    assert.deepEqual(
      await lacked('default'),
      SEARCH_ATTRIBUTE_KEYS.map((key) => key.name),
      'a dev server started without them',
    );
    const warnings: string[] = [];
    const log = { warn: (line: string) => warnings.push(line) };
    // An API and two workers starting at the same moment.
    await Promise.all(
      [1, 2, 3].map(() => ensureSearchAttributes(connection.operatorService, 'default', log)),
    );
    assert.deepEqual(await lacked('default'), []);
    assert.ok(warnings.length >= 1, 'registering them is said');
    assert.match(
      warnings[0],
      /^Temporal namespace default lacked llmgw's search attributes LlmgwModel, .*: registered them$/,
    );

    warnings.length = 0;
    await ensureSearchAttributes(connection.operatorService, 'default', log);
    assert.deepEqual(warnings, [], 'a later start finds them and says nothing');
  });

  it('stops with the sentence naming the commands where the server refuses', async () => {
    await crowdedNamespace(temporal.address, 'crowded');
    await assert.rejects(
      ensureSearchAttributes(connection.operatorService, 'crowded', { warn() {} }),
      (error: Error) => {
        assert.match(
          error.message,
          /^Temporal namespace crowded lacks llmgw's search attributes LlmgwModel, LlmgwOwner, LlmgwOwnerPath, LlmgwReplicas, LlmgwStatus, and the server refused to register them \(.*more than 10 search attribute of type Keyword\); have its operator run: temporal operator search-attribute create --namespace crowded --name LlmgwModel --type Keyword && /,
        );
        assert.doesNotMatch(error.message, /\n/, 'one sentence on one line');
        return true;
      },
    );
    assert.equal((await lacked('crowded')).length, SEARCH_ATTRIBUTE_KEYS.length, 'nothing registered');
  });
});
