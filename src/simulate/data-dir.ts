import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The project's root: src/simulate is two folders down. */
const REPO_ROOT = join(import.meta.dirname, '..', '..');

/**
 * Where the shared traces are: `dir` when given, else LLMGW_SIM_DATA, else ../shared/data beside the
 * repository. They are read there at run time and never copied into the project.
 */
export function dataDir(dir?: string): string {
  return dir ?? process.env.LLMGW_SIM_DATA ?? join(REPO_ROOT, '..', 'shared', 'data');
}

/** A trace file under the data folder, or a one-sentence error naming where it was looked for. */
export function dataFile(relativePath: string, dir?: string): string {
  const path = join(dataDir(dir), relativePath);
  if (!existsSync(path)) {
    throw new Error(
      `trace ${path} is missing: point --data (or LLMGW_SIM_DATA) at the folder that holds ${relativePath}`,
    );
  }
  return path;
}
