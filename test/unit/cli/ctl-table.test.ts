// llmgw ctl's tables fit the terminal: the last column, a sentence, is cut to the width left.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { table } from '../../../src/cli/ctl/output.ts';

const HEADERS = ['NAME', 'STATUS', 'LAST_DECISION'];
const SENTENCE =
  'scale up: 34 in flight > 30 at SLO on 3 replicas; placed vllm-h100 on gpu-3 (team Acme / ml within guarantee 8 GPUs, holds 6)';

describe('ctl tables', () => {
  const cases: { name: string; rows: string[][]; width?: number; lines: string[] }[] = [
    {
      name: 'without a width, nothing is cut',
      rows: [['chat', 'ok', SENTENCE]],
      lines: ['NAME  STATUS  LAST_DECISION', `chat  ok      ${SENTENCE}`],
    },
    {
      name: 'a sentence longer than the room left is cut with an ellipsis at the width',
      rows: [['chat', 'ok', SENTENCE]],
      width: 40,
      lines: ['NAME  STATUS  LAST_DECISION', 'chat  ok      scale up: 34 in flight > …'],
    },
    {
      name: 'a sentence that fits stays whole',
      rows: [['chat', 'ok', 'no change']],
      width: 40,
      lines: ['NAME  STATUS  LAST_DECISION', 'chat  ok      no change'],
    },
    {
      name: 'a terminal too narrow for the other columns still shows 20 characters of the sentence',
      rows: [['a-very-long-model-name', 'ok', SENTENCE]],
      width: 10,
      lines: [
        'NAME                    STATUS  LAST_DECISION',
        'a-very-long-model-name  ok      scale up: 34 in fli…',
      ],
    },
  ];
  for (const { name, rows, width, lines } of cases) {
    it(name, () => {
      assert.deepEqual(table(HEADERS, rows, '(none)', width).split('\n'), lines);
    });
  }
});
