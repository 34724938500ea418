// Issue 20: scopes resolve as the original API resolved them: spaces around the text trimmed, a path of
// the wrong depth answered as a scope that does not exist, names quoted as Go's %q quotes them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quoted, trimSpace } from '../../../src/domain/go-strings.ts';
import { resolveScope, scopeLabel } from '../../../src/domain/scope-names.ts';
import { org, project, team } from '../policy/fixtures.ts';

const SCOPES = [
  org('o1', 'Acme'),
  team('t1', 'o1', 'ml'),
  project('p1', 't1', 'training'),
  org('o2', 'Globex'),
  team('t2', 'o2', 'ml'),
];
const MALFORMED = 'is not org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT';

describe('resolveScope', () => {
  const cases: [text: string, answer: string][] = [
    ['team:Acme/ml', 'team:t1'],
    [' team:Acme/ml ', 'team:t1'],
    ['\tteam:acme / ML\n', 'team:t1'],
    ['team:t2', 'team:t2'],
    ['org:Acme', 'org:o1'],
    ['project:ml/training', 'project:p1'],
    ['project: Acme/ml/training', 'project:p1'],
    ['team:ml', '"ml" could be any of 2 teams; give its ID'],
    ['team:Acme/ml/extra', 'there is no team "Acme/ml/extra"'],
    ['team:Acme//ml', 'there is no team "Acme//ml"'],
    ['team:/ml', 'there is no team "/ml"'],
    ['team:/', 'there is no team "/"'],
    ['org:Acme/ml', 'there is no org "Acme/ml"'],
    ['project:Acme/ml/training/x', 'there is no project "Acme/ml/training/x"'],
    ['team:Acme/x"y', 'there is no team "Acme/x\\"y"'],
    ['team:a\u0000b', 'there is no team "a\\x00b"'],
    ['', `"" ${MALFORMED}`],
    ['  ', `"  " ${MALFORMED}`],
    ['team:', `"team:" ${MALFORMED}`],
    [' team: ', `" team: " ${MALFORMED}`],
    ['Team:Acme/ml', `"Team:Acme/ml" ${MALFORMED}`],
    ['galaxy:Acme', `"galaxy:Acme" ${MALFORMED}`],
    ['Acme/ml', `"Acme/ml" ${MALFORMED}`],
    ['x"y', `"x\\"y" ${MALFORMED}`],
  ];
  for (const [text, answer] of cases) {
    it(`${JSON.stringify(text)} -> ${answer}`, () => {
      const resolution = resolveScope(SCOPES, text);
      assert.equal('scope' in resolution ? resolution.scope.key : resolution.error, answer);
    });
  }

  it('takes a bare name of the default kind, trimmed', () => {
    const resolution = resolveScope(SCOPES, ' Globex ', 'org');
    assert.equal('scope' in resolution && resolution.scope.key, 'org:o2');
  });
});

describe('quoted (Go %q)', () => {
  const cases: [string, string][] = [
    ['ml', '"ml"'],
    ['x"y', '"x\\"y"'],
    ['a\\b', '"a\\\\b"'],
    ['\x07\b\f\n\r\t\v', '"\\a\\b\\f\\n\\r\\t\\v"'],
    ['\u0000\u001f\u007f', '"\\x00\\x1f\\x7f"'],
    ['é 日本 😀', '"é 日本 😀"'],
    ['\u00a0\u200b\u2028', '"\\u00a0\\u200b\\u2028"'],
    ['\u{e0001}', '"\\U000e0001"'],
  ];
  for (const [text, written] of cases) it(written, () => assert.equal(quoted(text), written));
});

describe('trimSpace (Go strings.TrimSpace)', () => {
  it('trims Unicode White_Space, NEL included, and keeps what Go keeps (a byte order mark)', () => {
    assert.equal(trimSpace('\u0085\u00a0 \t x y \u3000\n'), 'x y');
    assert.equal(trimSpace('\ufeffx'), '\ufeffx');
  });
});

describe('scopeLabel: one way for every sentence, decisions and API answers alike', () => {
  const byKey = new Map(SCOPES.map((scope) => [scope.key, scope]));
  const cases: [key: Parameters<typeof scopeLabel>[1], label: string][] = [
    ['org:o1', 'org Acme'],
    ['team:t1', 'team Acme / ml'],
    ['project:p1', 'project Acme/ml/training'],
    // A scope deleted since (a reclaim recorded for it) keeps the name it is stored under.
    ['team:gone', 'team:gone'],
  ];
  for (const [key, label] of cases)
    it(`${key} -> ${label}`, () => assert.equal(scopeLabel(byKey, key), label));
});
