// REPLAY-SENSITIVE: what crosses into workflows (src/contract/). Keyword attributes that let
// an operator filter the Temporal Web UI (docs/operating.md); `webhook/{id}` upserts
// WebhookStatus as it runs, and the server must know each key (the dev server is started
// with them, the full server registers them).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const WebhookIdKey = defineSearchAttributeKey('WebhookId', SearchAttributeType.KEYWORD);
export const AccountIdKey = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const ListIdKey = defineSearchAttributeKey('ListId', SearchAttributeType.KEYWORD);
export const WebhookStatusKey = defineSearchAttributeKey('WebhookStatus', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [WebhookIdKey, AccountIdKey, ListIdKey, WebhookStatusKey];
