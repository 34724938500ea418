import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { demoHints } from '../../../src/cli/demo.ts';

describe("the demo's hints", () => {
  for (const url of ['http://127.0.0.1:8080', 'http://127.0.0.1:18093']) {
    it(`point every command at the API on ${url}`, () => {
      const commands = demoHints(url).filter((line) => /curl|llmgw ctl/.test(line));
      assert.equal(commands.length, 2);
      assert.match(
        commands.find((line) => line.includes('curl')) ?? '',
        new RegExp(` ${url}/api/v1/models `),
      );
      assert.equal(
        commands.find((line) => line.includes('llmgw ctl'))?.trim(),
        `LLMGW_URL=${url} npx llmgw ctl model list`,
      );
    });
  }
});
