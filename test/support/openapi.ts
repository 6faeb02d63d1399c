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
