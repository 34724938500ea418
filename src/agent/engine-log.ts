import { open } from 'node:fs/promises';

const BLOCK = 64 * 1024;

/**
 * The last `count` lines of a log file, read from its end block by block so that a log of gigabytes
 * costs what its tail does. A missing file has no lines.
 */
export async function tailLines(path: string, count: number): Promise<string[]> {
  if (count <= 0) return [];
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!file) return [];
  try {
    const { size } = await file.stat();
    let text = '';
    let start = size;
    // One newline more than lines wanted: the first line of the text read may be cut.
    while (start > 0 && (text.match(/\n/g)?.length ?? 0) <= count) {
      const length = Math.min(BLOCK, start);
      start -= length;
      const buffer = Buffer.alloc(length);
      await file.read(buffer, 0, length, start);
      text = buffer.toString('utf8') + text;
    }
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines.slice(-count);
  } finally {
    await file.close();
  }
}
