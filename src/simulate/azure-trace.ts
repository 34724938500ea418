import { readFileSync } from 'node:fs';
import { CsvError, type Info, parse } from 'csv-parse/sync';

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
  if (time === undefined) return Number.NaN;
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi, s] = time.split(':');
  return Date.UTC(y, mo - 1, d, Number(h), Number(mi)) + Math.round(Number(s) * 1000);
}

const HEADER = 'TIMESTAMP,ContextTokens,GeneratedTokens';

/** The CSV's records with the line each ends on; a malformed file (a quote left open) in one sentence. */
function records(text: string, source: string): { record: string[]; line: number }[] {
  try {
    // With `info`, each record comes with where it was read, which csv-parse's types leave out.
    const read = parse(text, { skip_empty_lines: true, relax_column_count: true, trim: true, info: true });
    return (read as unknown as { record: string[]; info: Info }[]).map(({ record, info }) => ({
      record,
      line: info.lines,
    }));
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    throw new Error(`${source}: ${error.message}`);
  }
}

/** The requests of a `TIMESTAMP,ContextTokens,GeneratedTokens` file, in arrival order. */
export function parseAzureTrace(text: string, source = 'the trace'): TraceRequest[] {
  const [header, ...lines] = records(text, source);
  if (header?.record.join(',') !== HEADER) {
    throw new Error(`${source}: the first line is not ${HEADER}`);
  }
  const requests = lines.map(({ record, line }) => {
    const [timestamp, context, generated] = record;
    const request = {
      at: record.length === 3 ? parseTimestamp(timestamp) : Number.NaN,
      contextTokens: Number(context),
      generatedTokens: Number(generated),
    };
    if (!Number.isFinite(request.at + request.contextTokens + request.generatedTokens)) {
      throw new Error(`${source}: line ${line} is not a timestamp and two token counts`);
    }
    return request;
  });
  return requests.sort((a, b) => a.at - b.at);
}

export const readAzureTrace = (path: string) => parseAzureTrace(readFileSync(path, 'utf8'), path);
