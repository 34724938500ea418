import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** llmgw's search attributes: the Temporal UI lists and filters reconcilers by them. */
export const LlmgwModel = defineSearchAttributeKey('LlmgwModel', SearchAttributeType.KEYWORD);
/** The owner's key (`team:<id>`): stable across renames. */
export const LlmgwOwner = defineSearchAttributeKey('LlmgwOwner', SearchAttributeType.KEYWORD);
/** The owner as people name it (`Acme/ml`), for filtering by the name they know. */
export const LlmgwOwnerPath = defineSearchAttributeKey('LlmgwOwnerPath', SearchAttributeType.KEYWORD);
export const LlmgwReplicas = defineSearchAttributeKey('LlmgwReplicas', SearchAttributeType.INT);
export const LlmgwStatus = defineSearchAttributeKey('LlmgwStatus', SearchAttributeType.KEYWORD);

/** Every one the reconciler upserts: the namespace it runs in must have them all. */
export const SEARCH_ATTRIBUTE_KEYS = [LlmgwModel, LlmgwOwner, LlmgwOwnerPath, LlmgwReplicas, LlmgwStatus];
export type LlmgwSearchAttribute = (typeof SEARCH_ATTRIBUTE_KEYS)[number];

const CLI_TYPES = { [SearchAttributeType.KEYWORD]: 'Keyword', [SearchAttributeType.INT]: 'Int' } as const;
/** Its type as the Temporal CLI spells it (`--type`, `--search-attribute NAME=TYPE`). */
export const cliType = (key: LlmgwSearchAttribute) => CLI_TYPES[key.type];

/** `--search-attribute` values for the dev server, and what docker-compose registers. */
export const SEARCH_ATTRIBUTE_FLAGS = SEARCH_ATTRIBUTE_KEYS.map((key) => `${key.name}=${cliType(key)}`);
