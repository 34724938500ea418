import { levelsFromGuidellm } from './import-guidellm.ts';
import { levelsFromVllm } from './import-vllm.ts';
import type { Imported } from './imported.ts';
import { parseJsonRecords } from './json-records.ts';

const IMPORTERS = { vllm: levelsFromVllm, guidellm: levelsFromGuidellm } as const;
export type ImportFormat = keyof typeof IMPORTERS;
export const IMPORT_FORMATS = Object.keys(IMPORTERS) as ImportFormat[];

/** The levels of a result file written by `vllm bench serve` or GuideLLM. */
export function importResults(format: ImportFormat, text: string, source: string): Imported {
  const imported = IMPORTERS[format](parseJsonRecords(text, source), source);
  if (imported.levels.length === 0) throw new Error(`${source} holds no result`);
  return imported;
}
