import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** llmgw's search attributes: the Temporal UI lists and filters reconcilers by them. */
export const LlmgwModel = defineSearchAttributeKey('LlmgwModel', SearchAttributeType.KEYWORD);
export const LlmgwOwner = defineSearchAttributeKey('LlmgwOwner', SearchAttributeType.KEYWORD);
export const LlmgwReplicas = defineSearchAttributeKey('LlmgwReplicas', SearchAttributeType.INT);
export const LlmgwStatus = defineSearchAttributeKey('LlmgwStatus', SearchAttributeType.KEYWORD);

/** `--search-attribute` values for the dev server, and what docker-compose registers. */
export const SEARCH_ATTRIBUTE_FLAGS = [
  'LlmgwModel=Keyword',
  'LlmgwOwner=Keyword',
  'LlmgwReplicas=Int',
  'LlmgwStatus=Keyword',
];
