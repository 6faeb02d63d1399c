// The parts of an OpenAPI 3.1 document the tests read.

export type Schema = Record<string, any>;

export interface DocumentedResponse {
  description: string;
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { schema?: Schema }>;
}

export interface Operation {
  operationId: string;
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, DocumentedResponse>;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A path template such as `/v3/webhooks/{id}` as a RegExp that matches its concrete paths. */
export function templatePattern(template: string, flags?: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, flags);
}
