// Two checks markdownlint lacks, as its custom rules: a fenced code block that does not close (on a
// CommonMark renderer the rest of the file turns into code), and a relative link whose file, or heading
// in another Markdown file, a clone of the repository would not have.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { MicromarkToken, Rule } from 'markdownlint';
import { lint } from 'markdownlint-cli2/markdownlint/promise';

function* descendants(tokens: readonly MicromarkToken[]): Generator<MicromarkToken> {
  for (const token of tokens) {
    yield token;
    yield* descendants(token.children);
  }
}

export const fencesClose: Rule = {
  names: ['fences-close'],
  description: 'Fenced code blocks close',
  tags: ['code'],
  parser: 'micromark',
  function(params, onError) {
    for (const block of descendants(params.parsers.micromark.tokens)) {
      if (block.type !== 'codeFenced') continue;
      const fences = block.children.filter((t) => t.type === 'codeFencedFence');
      const sequence = fences[0].children.find((t) => t.type === 'codeFencedFenceSequence')?.text ?? '```';
      // A closing fence takes nothing after it: "``` Both ..." is code, and the block runs on.
      for (const line of block.children) {
        if (line.type === 'codeFlowValue' && line.text.trimStart().startsWith(sequence)) {
          onError({
            lineNumber: line.startLine,
            detail: `this line is inside the code block opened at line ${block.startLine}: a closing fence has nothing after it`,
          });
        }
      }
      if (fences.length < 2) {
        onError({
          lineNumber: block.startLine,
          detail: 'this fenced code block is never closed, so the rest of its container renders as code',
        });
      }
    }
  },
};

/** A link's destination as written, escapes undone: `docs/cli.md#tokens`. */
const destinationOf = (token: MicromarkToken): string =>
  [...descendants(token.children)]
    .filter((t) => t.type === 'data' || t.type === 'characterEscapeValue')
    .map((t) => t.text)
    .join('');

const hasScheme = (destination: string) =>
  /^[a-z][a-z\d+.-]*:/i.test(destination) || destination.startsWith('//');

interface Fragment {
  fragment: string;
  lineNumber: number;
  link: string;
}

/**
 * The fragments that name no heading (or anchor) of a Markdown file, as markdownlint's own MD051
 * finds them: each is linked from a line put before the file's text, and MD051 judges those lines.
 */
async function deadFragments(file: string, fragments: readonly Fragment[]): Promise<Fragment[]> {
  const probes = fragments.map((f) => `[probe](#${f.fragment})`).join('\n');
  const text = `${probes}\n\n${readFileSync(file, 'utf8')}`;
  const results = await lint({ strings: { [file]: text }, config: { default: false, MD051: true } });
  const dead = new Set(results[file].map((error) => error.lineNumber));
  return fragments.filter((_, i) => dead.has(i + 1));
}

/** Relative links resolve to a file inside `root`, and a `#fragment` to a heading of a Markdown file there. */
export function relativeLinks(root: string): Rule {
  return {
    names: ['relative-links'],
    description: 'Relative links point at files and headings in the repository',
    tags: ['links'],
    parser: 'micromark',
    asynchronous: true,
    async function(params, onError) {
      const fragmentsByFile = new Map<string, Fragment[]>();
      for (const token of descendants(params.parsers.micromark.tokens)) {
        if (token.type !== 'resourceDestinationString' && token.type !== 'definitionDestinationString') {
          continue;
        }
        const link = destinationOf(token);
        // Links within the file are MD051's; other sites are not ours to check.
        if (hasScheme(link) || link.startsWith('#')) continue;
        const fail = (detail: string) => onError({ lineNumber: token.startLine, detail, context: link });
        const [path, fragment] = link.split('#', 2);
        if (path.startsWith('/')) {
          fail('an absolute path: a clone has the file elsewhere; link relative to this file');
          continue;
        }
        let decoded: string;
        try {
          decoded = decodeURI(path);
        } catch {
          fail('the path is not valid percent-encoding');
          continue;
        }
        const target = resolve(dirname(resolve(params.name)), decoded);
        const inRepo = relative(root, target);
        if (inRepo.startsWith('..') || isAbsolute(inRepo)) {
          fail('the link leaves the repository, so a clone does not have what it points at');
        } else if (!existsSync(target)) {
          fail(`there is no ${inRepo}`);
        } else if (fragment && target.endsWith('.md')) {
          const list = fragmentsByFile.get(target) ?? [];
          fragmentsByFile.set(target, [...list, { fragment, lineNumber: token.startLine, link }]);
        }
      }
      for (const [file, fragments] of fragmentsByFile) {
        for (const dead of await deadFragments(file, fragments)) {
          onError({
            lineNumber: dead.lineNumber,
            detail: `${relative(root, file)} has no heading or anchor #${dead.fragment}`,
            context: dead.link,
          });
        }
      }
    },
  };
}
