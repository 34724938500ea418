import { levelsFromGuidellm } from './import-guidellm.ts';
import { levelsFromVllm } from './import-vllm.ts';
import { parseJsonRecords } from './json-records.ts';
import type { Level } from './level.ts';

/** Levels read from another tool's results, and what the reader had to assume. */
export interface Imported {
  /** The tool the results came from, as stored with the measurement. */
  tool: string;
  levels: Level[];
  warnings: string[];
}

const IMPORTERS = { vllm: levelsFromVllm, guidellm: levelsFromGuidellm } as const;
export type ImportFormat = keyof typeof IMPORTERS;
export const IMPORT_FORMATS = Object.keys(IMPORTERS) as ImportFormat[];

/** The levels of a result file written by `vllm bench serve` or GuideLLM. */
export function importResults(format: ImportFormat, text: string, source: string): Imported {
  const imported = IMPORTERS[format](parseJsonRecords(text, source), source);
  if (imported.levels.length === 0) throw new Error(`${source} holds no result`);
  return imported;
}
