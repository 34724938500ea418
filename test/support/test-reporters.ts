import { join } from 'node:path';

/** node --test's arguments for TAP on standard output, as before, and then the list of failures. */
export const TEST_REPORTERS = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${join(import.meta.dirname, 'failures-reporter.mjs')}`,
  '--test-reporter-destination=stdout',
];
