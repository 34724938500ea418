import { runCtlCapturing } from '../../src/cli/ctl/index.ts';
import type { Stack } from './stack.ts';

/** `llmgw ctl ARGV` run in-process against the test stack as its admin: exit code, stdout and stderr. */
export const ctl = (stack: Pick<Stack, 'url' | 'adminToken'>, ...argv: string[]) =>
  runCtlCapturing(['--server', stack.url, '--token', stack.adminToken, ...argv]);
