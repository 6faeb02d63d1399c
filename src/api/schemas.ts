// JSON schemas of every request, compiled once by one ajv instance. The same objects
// are the source of the OpenAPI document.
import Ajv, { type ErrorObject, type JSONSchemaType, type ValidateFunction } from 'ajv';
import { MAX_LIST_IDS, TOPICS, type Topic } from '../types';
import { apiErrors, type ValidationIssue } from './errors';

const ajv = new Ajv({ allErrors: false, strict: true });

const id = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' } as const;

export interface RegisterWebhookBody {
  url: string;
  events?: Topic[];
  listIds?: string[];
}

export const registerWebhookBodySchema: JSONSchemaType<RegisterWebhookBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    events: {
      type: 'array',
      nullable: true,
      minItems: 1,
      maxItems: TOPICS.length,
      uniqueItems: true,
      items: { type: 'string', enum: [...TOPICS] },
    },
    listIds: { type: 'array', nullable: true, maxItems: MAX_LIST_IDS, uniqueItems: true, items: id },
  },
};

export interface CreateAccountBody {
  name: string;
}

export const createAccountBodySchema: JSONSchemaType<CreateAccountBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
};

export interface PutListBody {
  ownerAccountId: string;
  memberAccountIds?: string[];
}

export const putListBodySchema: JSONSchemaType<PutListBody> = {
  type: 'object',
  additionalProperties: false,
  required: ['ownerAccountId'],
  properties: {
    ownerAccountId: id,
    memberAccountIds: { type: 'array', nullable: true, maxItems: 1000, uniqueItems: true, items: id },
  },
};

export const idSchema: JSONSchemaType<string> = id;

export const validators = {
  registerWebhookBody: ajv.compile(registerWebhookBodySchema),
  createAccountBody: ajv.compile(createAccountBodySchema),
  putListBody: ajv.compile(putListBodySchema),
  id: ajv.compile(idSchema),
};

function toIssue(error: ErrorObject, prefix: string): ValidationIssue {
  const base = `${prefix}${error.instancePath}`;
  switch (error.keyword) {
    case 'required':
      return { path: `${base}/${error.params.missingProperty}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${base}/${error.params.additionalProperty}`, message: 'is not allowed' };
    default:
      return { path: base || '/', message: error.message ?? 'is invalid' };
  }
}

/**
 * Returns `data` typed as the schema says, or throws VALIDATION_FAILED naming where it
 * failed. `prefix` places the path, e.g. '' for the body or '/params' for a path parameter.
 */
export function validate<T>(validator: ValidateFunction<T>, data: unknown, prefix = ''): T {
  if (validator(data)) return data;
  throw apiErrors.validationFailed((validator.errors ?? []).map((error) => toIssue(error, prefix)));
}
