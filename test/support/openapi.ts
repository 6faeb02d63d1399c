// The service's OpenAPI document as the tests read it: its operations, which operation a
// method and path reach, the statuses and error codes each documents, and its `$ref`s.
// One reader for the document's own tests, the contract test and the fuzzer.

export type Schema = Record<string, any>;

export interface DocumentedResponse {
  description: string;
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { schema?: Schema }>;
}

export interface Operation {
  operationId: string;
  description?: string;
  security?: Record<string, string[]>[];
  /** The scopes of an account's token the operation needs (every one of them). */
  'x-required-scopes'?: string[];
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, DocumentedResponse>;
}

export interface OpenApiDocument {
  info?: { description?: string };
  security?: Record<string, string[]>[];
  components?: { schemas?: Record<string, Schema>; securitySchemes?: Record<string, unknown> };
  paths: Record<string, Record<string, unknown>>;
}

export interface DocumentedOperation {
  template: string;
  /** Lower case, as the document keys it. */
  method: string;
  pattern: RegExp;
  /** JSON pointer of the operation in the document. */
  pointer: string;
  operation: Operation;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One part of a JSON pointer, escaped. */
export const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

/** A path template such as `/v3/webhooks/{id}` as a RegExp that matches its concrete paths. */
export function templatePattern(template: string, flags?: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '([^/]+)' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, flags);
}

export class OpenApi {
  readonly operations: DocumentedOperation[] = [];

  constructor(readonly document: OpenApiDocument) {
    for (const [template, item] of Object.entries(document.paths)) {
      // Like the service's routers, which match a path in its own letter case only (/V3/webhooks is no route).
      const pattern = templatePattern(template);
      for (const method of HTTP_METHODS) {
        const operation = item[method] as Operation | undefined;
        if (operation)
          this.operations.push({ template, method, pattern, pointer: `/paths/${escapePointer(template)}/${method}`, operation });
      }
    }
  }

  byId(operationId: string): DocumentedOperation {
    const found = this.operations.find(({ operation }) => operation.operationId === operationId);
    if (!found) throw new Error(`no operation ${operationId} in the document`);
    return found;
  }

  /** The operation `method path` reaches; undefined for an undocumented method or path. */
  find(method: string, path: string): DocumentedOperation | undefined {
    const pathname = new URL(path, 'http://openapi.test').pathname;
    const parameters = (template: string) => (template.match(/\{/g) ?? []).length;
    return this.operations
      .filter((candidate) => candidate.method === method.toLowerCase() && candidate.pattern.test(pathname))
      .sort((a, b) => parameters(a.template) - parameters(b.template))[0];
  }

  /** Whether some documented operation has this path (with any method). */
  knowsPath(path: string): boolean {
    const pathname = new URL(path, 'http://openapi.test').pathname;
    return this.operations.some((candidate) => candidate.pattern.test(pathname));
  }

  securitySchemes(operation: Operation): string[] {
    return (operation.security ?? this.document.security ?? []).flatMap((requirement) => Object.keys(requirement));
  }

  /** The node at a local `$ref`, followed until it is no `$ref`; throws on any other `$ref`, a cycle, or a dangling one. */
  deref(node: Schema | undefined): Schema | undefined {
    let current = node;
    for (let depth = 0; current && typeof current.$ref === 'string'; depth++) {
      const ref: string = current.$ref;
      if (depth === 20) throw new Error(`$ref cycle at ${ref}`);
      if (!ref.startsWith('#/')) throw new Error(`only local $refs are expected, got ${ref}`);
      current = ref
        .slice(2)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<any>((value, part) => value?.[part], this.document);
      if (current === undefined) throw new Error(`$ref ${ref} resolves to nothing`);
    }
    return current;
  }

  /** The error codes a documented response lists. */
  codes(response: DocumentedResponse | undefined): string[] {
    const schema = this.deref(response?.content?.['application/json']?.schema);
    return (this.deref(this.deref(schema?.properties?.error)?.properties?.code)?.enum as string[] | undefined) ?? [];
  }

  requestSchema(operation: Operation): Schema | undefined {
    return this.resolve(operation.requestBody?.content['application/json']?.schema);
  }

  /** A schema with every `$ref` inside it replaced by what it points at. */
  resolve(node: Schema | undefined): Schema | undefined {
    const schema = this.deref(node);
    if (!schema || typeof schema !== 'object') return schema;
    const out: Schema = Array.isArray(schema) ? [] : {};
    for (const [key, value] of Object.entries(schema)) out[key] = value && typeof value === 'object' ? this.resolve(value) : value;
    return out;
  }
}
