import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAzureTrace } from '../../../src/simulate/azure-trace.ts';
import { dataFile } from '../../../src/simulate/data-dir.ts';

describe('traces', () => {
  it('are found under the data folder given', () => {
    const dir = mkdtempSync(join(tmpdir(), 'llmgw-sim-'));
    writeFileSync(join(dir, 'trace.csv'), 'TIMESTAMP,ContextTokens,GeneratedTokens\n');
    assert.equal(dataFile('trace.csv', dir), join(dir, 'trace.csv'));
  });

  it('missing, say where they were looked for and how to point elsewhere, in one sentence', () => {
    assert.throws(
      () => dataFile('azure-llm-2023/none.csv', '/nowhere'),
      /^Error: trace \/nowhere\/azure-llm-2023\/none.csv is missing: point --data \(or LLMGW_SIM_DATA\)/,
    );
  });

  it('read the Azure columns, in arrival order, with milliseconds from the timestamp', () => {
    const requests = parseAzureTrace(
      'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:50.9951690,396,109\n2023-11-16 18:15:46.6805900,374,44\n',
    );
    assert.deepEqual(requests, [
      { at: Date.UTC(2023, 10, 16, 18, 15, 46, 681), contextTokens: 374, generatedTokens: 44 },
      { at: Date.UTC(2023, 10, 16, 18, 15, 50, 995), contextTokens: 396, generatedTokens: 109 },
    ]);
  });

  it('refuse a file that is not the Azure trace', () => {
    assert.throws(() => parseAzureTrace('a,b\n1,2\n', 'x.csv'), /x.csv: the first line is not/);
  });

  it('read quoted fields and CRLF lines as CSV, and name the line of a bad one', () => {
    const header = 'TIMESTAMP,ContextTokens,GeneratedTokens\r\n';
    assert.deepEqual(parseAzureTrace(`${header}"2023-11-16 18:15:46.6805900","374",44\r\n`), [
      { at: Date.UTC(2023, 10, 16, 18, 15, 46, 681), contextTokens: 374, generatedTokens: 44 },
    ]);
    assert.throws(
      () => parseAzureTrace(`${header}2023-11-16 18:15:46.6805900,374,44\r\n\r\n2023-11-16,x,1\r\n`, 'x.csv'),
      /^Error: x.csv: line 4 is not a timestamp and two token counts$/,
    );
    assert.throws(
      () => parseAzureTrace(`${header}2023-11-16 18:15:46.6805900,374\r\n`, 'x.csv'),
      /^Error: x.csv: line 2 is not a timestamp and two token counts$/,
    );
    assert.throws(() => parseAzureTrace(`${header}"2023-11-16,1,2\n`, 'x.csv'), /^Error: x.csv: .*quote/i);
  });
});
