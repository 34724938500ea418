// LLMGW_ADMIN_TOKEN must be hard to guess (issue 19, item 9): a secret whose characters repeat is refused
// at start with a sentence saying how to make one; random secrets of 32 bytes always pass.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../../src/config.ts';
import { estimatedBits, guessesLog10, newSecret } from '../../../src/contracts/secrets.ts';

describe('LLMGW_ADMIN_TOKEN strength', () => {
  it('refuses secrets of 32 or more characters that repeat too few of them', () => {
    for (const weak of [
      'a'.repeat(32),
      'ab'.repeat(16),
      'abcdefgh'.repeat(4),
      'password1234password1234password',
    ]) {
      assert.throws(
        () => readConfig({ LLMGW_ADMIN_TOKEN: weak }),
        (error: Error) =>
          error instanceof ConfigError &&
          /^LLMGW_ADMIN_TOKEN is too easy to guess \(its characters repeat: about \d+ bits, 128 needed\); make one with: openssl rand -base64 32$/.test(
            error.message,
          ),
        weak,
      );
    }
  });

  it('refuses secrets of words and patterns that zxcvbn sees, though their characters vary (issue 30)', () => {
    for (const weak of ['Password1234567890Password123456', 'qwertyuiopasdfghjkl1234567890zxcvbnm']) {
      assert.ok(estimatedBits(weak) >= 128, `${weak}: the character count alone lets it through`);
      assert.throws(
        () => readConfig({ LLMGW_ADMIN_TOKEN: weak }),
        (error: Error) =>
          error instanceof ConfigError &&
          /^LLMGW_ADMIN_TOKEN is too easy to guess \(it follows words or patterns: about 10\^\d+ guesses, 10\^25 needed\); make one with: openssl rand -base64 32$/.test(
            error.message,
          ),
        weak,
      );
    }
  });

  it('takes every secret that llmgw, openssl rand -base64 32 and openssl rand -hex 32 make', () => {
    let weakest = Number.POSITIVE_INFINITY;
    let fewestGuesses = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 2000; i += 1) {
      for (const secret of [
        newSecret(),
        randomBytes(32).toString('base64'),
        randomBytes(32).toString('hex'),
      ]) {
        weakest = Math.min(weakest, estimatedBits(secret));
        // zxcvbn takes a fraction of a second on a long random secret: a few through the whole check.
        if (i < 5) {
          assert.equal(readConfig({ LLMGW_ADMIN_TOKEN: secret }).adminToken, secret);
          fewestGuesses = Math.min(fewestGuesses, guessesLog10(secret));
        }
      }
    }
    assert.ok(weakest > 160, `the weakest estimate was ${weakest} bits, far above the 128 needed`);
    assert.ok(fewestGuesses > 35, `zxcvbn's fewest were 10^${fewestGuesses} guesses, far above 10^25`);
  });

  it('estimates bits from how often each character occurs', () => {
    assert.equal(estimatedBits('a'.repeat(40)), 0);
    assert.equal(estimatedBits('ab'.repeat(20)), 40);
    assert.equal(estimatedBits('abcd'.repeat(10)), 80);
  });
});
