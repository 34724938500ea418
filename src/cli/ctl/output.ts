import { stringify } from 'yaml';
import type { CtlIo } from './io.ts';

export const FORMATS = ['table', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

type Cell = string | number | boolean | null | undefined;

/** Where the width of a terminal is unknown (a pipe, a file): wide enough for a table's short columns. */
const DEFAULT_WIDTH = 120;
/** What a cut last column keeps at least, however narrow the terminal. */
const LEAST_LAST_COLUMN = 20;

/**
 * Columns padded to their widest cell; an empty list says so rather than printing bare headers. With
 * `width`, the last column (a sentence) is cut with '…' so that each line fits it.
 */
export function table(headers: string[], rows: Cell[][], empty = '(none)', width?: number): string {
  if (rows.length === 0) return empty;
  const text = [
    headers,
    ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell)))),
  ];
  const widths = headers.map((_, i) => Math.max(...text.map((row) => row[i].length)));
  if (width !== undefined) {
    const last = headers.length - 1;
    const room = Math.max(
      LEAST_LAST_COLUMN,
      width - widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0),
    );
    for (const row of text) if (row[last].length > room) row[last] = `${row[last].slice(0, room - 1)}…`;
    widths[last] = Math.min(widths[last], room);
  }
  return text
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** What a command prints: the server's data for scripts (json, yaml), a view of it for people (table). */
export class Output {
  constructor(
    private readonly io: CtlIo,
    readonly format: Format,
  ) {}

  /** How wide a line for people may be: the terminal's width, else COLUMNS, else 120. */
  get width(): number {
    return this.io.columns ?? (Number(this.io.env.COLUMNS) || DEFAULT_WIDTH);
  }

  show(data: unknown, forPeople: () => string) {
    if (this.format === 'json') this.io.out(JSON.stringify(data, null, 2));
    else if (this.format === 'yaml') this.io.out(stringify(data).trimEnd());
    else this.io.out(forPeople());
  }

  /** Progress and remarks go to stderr, so that stdout stays the result. */
  note(text: string) {
    this.io.err(text);
  }
}

/** A number shown with at most `digits` decimals. */
export const num = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined ? '-' : String(Math.round(value * 10 ** digits) / 10 ** digits);
