// The Markdown check (`npm run lint:docs`): markdownlint-cli2 with .markdownlint-cli2.jsonc and the rules
// of scripts/markdown-rules.ts, on the files of test/fixtures/markdown/ and on the repository's own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkMarkdown } from '../../../scripts/check-markdown.ts';

const fixture = (name: string) => `test/fixtures/markdown/${name}`;

/** The exit code and the issues reported (one line each: `file:line[:column] error RULE ...`). */
async function check(...files: string[]): Promise<{ code: number; issues: string[] }> {
  const issues: string[] = [];
  const code = await checkMarkdown(files, { message: () => {}, error: (line) => issues.push(line) });
  return { code, issues };
}

describe('the Markdown check', () => {
  it('passes a file whose fence closes and whose links resolve, here and in another file', async () => {
    assert.deepEqual(await check(fixture('good.md')), { code: 0, issues: [] });
  });

  it('fails a closing fence with text after it, which leaves the block open to the end', async () => {
    const { code, issues } = await check(fixture('broken-fence.md'));
    assert.equal(code, 1);
    const lines = issues.filter((i) => i.includes('fences-close')).map((i) => i.split(' ')[0]);
    assert.deepEqual(lines.sort(), [`${fixture('broken-fence.md')}:3`, `${fixture('broken-fence.md')}:5`]);
  });

  it('fails a link to a file that does not exist', async () => {
    const { code, issues } = await check(fixture('dead-link.md'));
    assert.equal(code, 1);
    assert.equal(issues.length, 1, issues.join('\n'));
    assert.match(
      issues[0],
      /dead-link\.md:3 .*relative-links.*there is no test\/fixtures\/markdown\/policy\.md/,
    );
  });

  it('fails a link to a heading that the other file does not have', async () => {
    const { code, issues } = await check(fixture('dead-anchor.md'));
    assert.equal(code, 1);
    assert.equal(issues.length, 1, issues.join('\n'));
    assert.match(issues[0], /dead-anchor\.md:3 .*other\.md has no heading or anchor #no-such-heading/);
  });

  it('fails a link out of the repository, even to a file this machine has', async () => {
    const { code, issues } = await check(fixture('outside-link.md'));
    assert.equal(code, 1);
    assert.equal(issues.length, 1, issues.join('\n'));
    assert.match(issues[0], /outside-link\.md:3 .*leaves the repository/);
  });

  it("passes the repository's own Markdown", async () => {
    const { code, issues } = await check();
    assert.equal(code, 0, issues.join('\n'));
  });
});
