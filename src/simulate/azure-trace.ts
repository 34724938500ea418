import { readFileSync } from 'node:fs';

/** One request of the Azure LLM inference trace (Splitwise, ISCA'24): when it came and its size. */
export interface TraceRequest {
  /** Milliseconds since the epoch. */
  at: number;
  contextTokens: number;
  generatedTokens: number;
}

/** "2023-11-16 18:15:46.6805900" (UTC, 7 decimals) as milliseconds since the epoch. */
function parseTimestamp(text: string): number {
  const [date, time] = text.split(' ');
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s] = time.split(':');
  return Date.UTC(y, mo - 1, d, Number(h), Number(mi)) + Math.round(Number(s) * 1000);
}

/** The requests of a `TIMESTAMP,ContextTokens,GeneratedTokens` file, in arrival order. */
export function parseAzureTrace(text: string, source = 'the trace'): TraceRequest[] {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines[0]?.trim() !== 'TIMESTAMP,ContextTokens,GeneratedTokens') {
    throw new Error(`${source}: the first line is not TIMESTAMP,ContextTokens,GeneratedTokens`);
  }
  const requests = lines.slice(1).map((line, i) => {
    const [timestamp, context, generated] = line.split(',');
    const request = {
      at: parseTimestamp(timestamp),
      contextTokens: Number(context),
      generatedTokens: Number(generated),
    };
    if (!Number.isFinite(request.at + request.contextTokens + request.generatedTokens)) {
      throw new Error(`${source}: line ${i + 2} is not a timestamp and two token counts`);
    }
    return request;
  });
  return requests.sort((a, b) => a.at - b.at);
}

export const readAzureTrace = (path: string) => parseAzureTrace(readFileSync(path, 'utf8'), path);
