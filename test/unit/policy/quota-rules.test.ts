import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guaranteeAboveLimit } from '../../../src/policy/quota-rules.ts';

describe('quota rules', () => {
  it('refuses a guarantee above the limit on the same dimension only', () => {
    assert.equal(guaranteeAboveLimit({ gpus: 16 }, { gpus: 8 }), 'gpus');
    assert.equal(guaranteeAboveLimit({ gpus: 8, cores: 100 }, { gpus: 8 }), null);
    assert.equal(guaranteeAboveLimit({ gpus: 4 }, { gpus: 8, cores: 0 }), null);
    assert.equal(guaranteeAboveLimit({ cores: 10 }, { cores: 8, gpus: 1 }), 'cores');
    assert.equal(guaranteeAboveLimit(undefined, { gpus: 8 }), null);
    assert.equal(guaranteeAboveLimit({ gpus: 8 }, undefined), null);
  });
});
