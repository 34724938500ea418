// Client side (the worker and the API at start, and /readyz): not part of the workflow bundle.
import type { Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { cliType, type LlmgwSearchAttribute, SEARCH_ATTRIBUTE_KEYS } from '../workflows/search-attributes.ts';

export type OperatorService = Pick<
  Connection['operatorService'],
  'listSearchAttributes' | 'addSearchAttributes'
>;

/** Temporal's IndexedValueType (temporal.api.enums.v1) of each type llmgw's search attributes have. */
const INDEXED_TYPES = { KEYWORD: 2, INT: 3 } as const satisfies Record<
  LlmgwSearchAttribute['type'],
  temporal.api.enums.v1.IndexedValueType
>;

/** The request that registers `keys` in `namespace` (the time-skipping test server takes it, though it cannot list them). */
export function registration(namespace: string, keys: readonly LlmgwSearchAttribute[]) {
  return {
    namespace,
    searchAttributes: Object.fromEntries(keys.map((key) => [key.name, INDEXED_TYPES[key.type]])),
  };
}

/** Of llmgw's search attributes, those a namespace's custom ones (name -> type) lack or have with another type. */
export function missingSearchAttributes(listed: Record<string, number>): LlmgwSearchAttribute[] {
  return SEARCH_ATTRIBUTE_KEYS.filter((key) => listed[key.name] !== INDEXED_TYPES[key.type]);
}

/** The Temporal CLI commands that register them. */
export function createCommands(namespace: string, keys: readonly LlmgwSearchAttribute[]): string[] {
  return keys.map(
    (key) =>
      `temporal operator search-attribute create --namespace ${namespace} --name ${key.name} --type ${cliType(key)}`,
  );
}

/** Why llmgw stops: the namespace lacks some and the server would not register them. */
export function refusedSentence(namespace: string, keys: readonly LlmgwSearchAttribute[], why: string) {
  const names = keys.map((key) => key.name).join(', ');
  return `Temporal namespace ${namespace} lacks llmgw's search attributes ${names}, and the server refused to register them (${why}); have its operator run: ${createCommands(namespace, keys).join(' && ')}`;
}

/** Those the namespace lacks (one look at its list). */
export async function lackedSearchAttributes(
  operator: OperatorService,
  namespace: string,
): Promise<LlmgwSearchAttribute[]> {
  const { customAttributes } = await operator.listSearchAttributes({ namespace });
  return missingSearchAttributes(customAttributes ?? {});
}

/**
 * Registers those the namespace lacks where the server lets us (a dev server; a self-hosted one), since
 * every reconciler's workflow task fails without them; throws the sentence naming the commands where it
 * does not. Several processes doing it at once is harmless: the server keeps one of each.
 */
export async function ensureSearchAttributes(
  operator: OperatorService,
  namespace: string,
  log: Pick<Console, 'warn'>,
): Promise<void> {
  const missing = await lackedSearchAttributes(operator, namespace);
  if (missing.length === 0) return;
  try {
    await operator.addSearchAttributes(registration(namespace, missing));
  } catch (error) {
    throw new Error(refusedSentence(namespace, missing, serverSaid(error)));
  }
  // A warning: something set up the namespace without them (only a fresh dev server should lack them).
  log.warn(
    `Temporal namespace ${namespace} lacked llmgw's search attributes ${missing.map((key) => key.name).join(', ')}: registered them`,
  );
}

/** A gRPC error's own words (its `details`), without the status code the message starts with. */
function serverSaid(error: unknown): string {
  const details = (error as { details?: unknown } | null)?.details;
  const text = typeof details === 'string' && details ? details : String(error);
  return text.replace(/\.$/, '');
}
