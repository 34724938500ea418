import type { Level } from './level.ts';

/** Levels read from another tool's results, and what the reader had to assume. */
export interface Imported {
  /** The tool the results came from, as stored with the measurement. */
  tool: string;
  levels: Level[];
  warnings: string[];
}
