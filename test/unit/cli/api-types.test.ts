// The CLI's types of the API's answers (src/cli/ctl/api.gen.ts) are generated from its OpenAPI
// document: this fails while the committed file is not what the current app's document gives.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { API_TYPES_FILE, apiTypesSource } from '../../../scripts/api-types.ts';

describe("the CLI's API types", () => {
  it('are what the API describes now (else run: npm run api-types)', async () => {
    assert.ok(
      readFileSync(API_TYPES_FILE, 'utf8') === (await apiTypesSource()),
      `${API_TYPES_FILE} differs from the API's OpenAPI document: run npm run api-types`,
    );
  });
});
