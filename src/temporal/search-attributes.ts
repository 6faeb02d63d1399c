import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Keyword attributes that let an operator filter the Temporal Web UI (docs/operating.md).
export const WebhookIdKey = defineSearchAttributeKey('WebhookId', SearchAttributeType.KEYWORD);
export const AccountIdKey = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const ListIdKey = defineSearchAttributeKey('ListId', SearchAttributeType.KEYWORD);
export const WebhookStatusKey = defineSearchAttributeKey('WebhookStatus', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [WebhookIdKey, AccountIdKey, ListIdKey, WebhookStatusKey];
