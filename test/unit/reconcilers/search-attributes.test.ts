// llmgw's search attributes on a Temporal that is not ours (src/reconcilers/search-attribute-check.ts):
// which ones a namespace lacks, registering them, and the sentence when the server will not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createCommands,
  ensureSearchAttributes,
  missingSearchAttributes,
  type OperatorService,
} from '../../../src/reconcilers/search-attribute-check.ts';
import { SEARCH_ATTRIBUTE_FLAGS, SEARCH_ATTRIBUTE_KEYS } from '../../../src/workflows/search-attributes.ts';

// Temporal's IndexedValueType values (temporal.api.enums.v1).
const TEXT = 1;
const KEYWORD = 2;
const INT = 3;
const ALL = {
  LlmgwModel: KEYWORD,
  LlmgwOwner: KEYWORD,
  LlmgwOwnerPath: KEYWORD,
  LlmgwReplicas: INT,
  LlmgwStatus: KEYWORD,
};
const names = (keys: readonly { name: string }[]) => keys.map((key) => key.name);
const allBut = (...left: string[]) =>
  Object.fromEntries(Object.entries(ALL).filter(([name]) => !left.includes(name)));

describe('the search attributes a namespace lacks', () => {
  const cases: [string, Record<string, number>, string[]][] = [
    ['none listed', {}, Object.keys(ALL)],
    ['all five, and others', { ...ALL, CustomKeywordField: KEYWORD }, []],
    ['the four of before LlmgwOwnerPath', allBut('LlmgwOwnerPath'), ['LlmgwOwnerPath']],
    [
      'one with another type',
      { ...ALL, LlmgwReplicas: KEYWORD, LlmgwStatus: TEXT },
      ['LlmgwReplicas', 'LlmgwStatus'],
    ],
    ['a name in another case', { ...allBut('LlmgwModel'), llmgwmodel: KEYWORD }, ['LlmgwModel']],
  ];
  for (const [what, listed, missing] of cases) {
    it(what, () => assert.deepEqual(names(missingSearchAttributes(listed)), missing));
  }

  it('are the five the workflow upserts, and the dev server gets them as flags', () => {
    assert.deepEqual(names(SEARCH_ATTRIBUTE_KEYS), Object.keys(ALL));
    assert.deepEqual(SEARCH_ATTRIBUTE_FLAGS, [
      'LlmgwModel=Keyword',
      'LlmgwOwner=Keyword',
      'LlmgwOwnerPath=Keyword',
      'LlmgwReplicas=Int',
      'LlmgwStatus=Keyword',
    ]);
  });
});

/** An operator service that lists `listed` and registers with `add` (which may throw). */
function fakeOperator(listed: Record<string, number>, add: (request: unknown) => void = () => {}) {
  const added: unknown[] = [];
  const operator = {
    listSearchAttributes: async () => ({ customAttributes: listed }),
    addSearchAttributes: async (request: unknown) => {
      add(request);
      added.push(request);
      return {};
    },
  } as unknown as OperatorService;
  return { operator, added };
}

const quiet = () => {
  const lines: string[] = [];
  return { lines, log: { warn: (line: string) => lines.push(line) } };
};

describe('ensuring them at start', () => {
  it('registers only those missing, with their types, and says so', async () => {
    const { operator, added } = fakeOperator({ LlmgwModel: KEYWORD, LlmgwReplicas: INT });
    const { lines, log } = quiet();
    await ensureSearchAttributes(operator, 'prod', log);
    assert.deepEqual(added, [
      {
        namespace: 'prod',
        searchAttributes: { LlmgwOwner: KEYWORD, LlmgwOwnerPath: KEYWORD, LlmgwStatus: KEYWORD },
      },
    ]);
    assert.deepEqual(lines, [
      "Temporal namespace prod lacked llmgw's search attributes LlmgwOwner, LlmgwOwnerPath, LlmgwStatus: registered them",
    ]);
  });

  it('asks nothing of a namespace that has them all', async () => {
    const { operator, added } = fakeOperator(ALL);
    const { lines, log } = quiet();
    await ensureSearchAttributes(operator, 'prod', log);
    assert.deepEqual([added, lines], [[], []]);
  });

  it('stops with one sentence naming the server reason and the commands to run when the server refuses', async () => {
    // As a gRPC error comes: the code in its message, the server's words in `details`.
    const refusal = Object.assign(new Error('7 PERMISSION_DENIED: Request unauthorized.'), {
      code: 7,
      details: 'Request unauthorized.',
    });
    const { operator } = fakeOperator(allBut('LlmgwOwnerPath', 'LlmgwReplicas'), () => {
      throw refusal;
    });
    await assert.rejects(ensureSearchAttributes(operator, 'prod', quiet().log), {
      message:
        "Temporal namespace prod lacks llmgw's search attributes LlmgwOwnerPath, LlmgwReplicas, and the server refused to register them (Request unauthorized); have its operator run: " +
        'temporal operator search-attribute create --namespace prod --name LlmgwOwnerPath --type Keyword && ' +
        'temporal operator search-attribute create --namespace prod --name LlmgwReplicas --type Int',
    });
  });

  it('names one command per attribute, as the Temporal CLI takes them', () => {
    assert.deepEqual(createCommands('default', SEARCH_ATTRIBUTE_KEYS), [
      'temporal operator search-attribute create --namespace default --name LlmgwModel --type Keyword',
      'temporal operator search-attribute create --namespace default --name LlmgwOwner --type Keyword',
      'temporal operator search-attribute create --namespace default --name LlmgwOwnerPath --type Keyword',
      'temporal operator search-attribute create --namespace default --name LlmgwReplicas --type Int',
      'temporal operator search-attribute create --namespace default --name LlmgwStatus --type Keyword',
    ]);
  });
});
