// `npm run lint:docs`: markdownlint-cli2 over the repository's Markdown, as .markdownlint-cli2.jsonc
// says, plus the checks of scripts/markdown-rules.ts. Arguments name files to check instead.
/// <reference path="./markdownlint-cli2.d.ts" />
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from 'markdownlint-cli2';
import { fencesClose, relativeLinks } from './markdown-rules.ts';

const root = resolve(import.meta.dirname, '..');

export interface MarkdownLog {
  message(line: string): void;
  error(line: string): void;
}

/** Checks `files` (paths from the repository root), or every Markdown file the config names; 0 when clean. */
export function checkMarkdown(
  files: readonly string[] = [],
  log: MarkdownLog = { message: console.info, error: console.error },
): Promise<number> {
  return main({
    directory: root,
    // A leading ':' makes markdownlint-cli2 take a path as it is, not as a glob.
    argv: files.map((file) => `:${file}`),
    noGlobs: files.length > 0,
    logMessage: log.message,
    logError: log.error,
    // Files named are checked even where the config's `ignores` would skip them (the test fixtures).
    optionsOverride: {
      customRules: [fencesClose, relativeLinks(root)],
      ...(files.length > 0 && { ignores: [] }),
    },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await checkMarkdown(process.argv.slice(2));
}
