import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sseData } from '../../../src/engine-bench/sse.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** The stream's bytes cut at the given offsets, as a socket may deliver them. */
async function* cut(text: string, at: number[]): AsyncGenerator<Uint8Array> {
  const all = bytes(text);
  let from = 0;
  for (const end of [...new Set(at)].sort((a, b) => a - b)) {
    yield all.slice(from, end);
    from = end;
  }
  yield all.slice(from);
}

const read = async (body: AsyncIterable<Uint8Array>) => {
  const out: string[] = [];
  for await (const data of sseData(body)) out.push(data);
  return out;
};

const STREAM = [
  ': a comment',
  'event: message',
  'data: {"a":1}',
  '',
  'data: first line',
  'data:second line, no space',
  'data: été',
  '',
  'event: only a name, no data',
  '',
  'data: [DONE]',
  '',
].join('\r\n');

describe('sseData', () => {
  it('gives one payload per event, joining multi-line data with \\n, skipping comments and events without data', async () => {
    assert.deepEqual(await read(cut(STREAM, [])), [
      '{"a":1}',
      'first line\nsecond line, no space\nété',
      '[DONE]',
    ]);
  });

  it('reads the same wherever the bytes are cut, inside a line, a CRLF or a UTF-8 character', async () => {
    const length = bytes(STREAM).length;
    const expected = await read(cut(STREAM, []));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: length }), { maxLength: 12 }), async (at) => {
        assert.deepEqual(await read(cut(STREAM, at)), expected);
      }),
    );
  });

  it('reads LF-only streams, and a data line with nothing after the colon as an empty payload', async () => {
    assert.deepEqual(await read(cut('data: x\n\ndata:\n\n', [])), ['x', '']);
  });

  it('drops a last line cut short, as the spec says', async () => {
    assert.deepEqual(await read(cut('data: x\n\ndata: cut sh', [])), ['x']);
  });
});
