import { writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * What node's test runner is given for a run of unit tests alone. A process per file costs about 0.4 s
 * of CPU before its first test (node and tsx start), which sixty files pay for twice over on two cores;
 * so the files of each folder beneath test/unit run together, one process per folder, through an entry
 * written into `dir` that imports them. Those files must leave the process as they found it; a test
 * that changes it (the environment, a cache of the harness, tight timers) sits in test/unit itself,
 * where each file keeps a process of its own. Folders come first: they take longest.
 */
export function unitGroups(root: string, files: readonly string[], dir: string): string[] {
  const alone: string[] = [];
  const byFolder = new Map<string, string[]>();
  for (const file of files) {
    const folder = relative(join('test', 'unit'), dirname(file));
    if (folder === '') alone.push(file);
    else byFolder.set(folder, [...(byFolder.get(folder) ?? []), file]);
  }
  const entries = [...byFolder].map(([folder, members]) => {
    const entry = join(dir, `test-unit-${folder.replaceAll('/', '-')}.mjs`);
    const imports = members.map((file) => `import ${JSON.stringify(pathToFileURL(join(root, file)).href)};`);
    writeFileSync(entry, `${imports.join('\n')}\n`);
    return entry;
  });
  return [...entries, ...alone];
}
