// Reading the service's OpenAPI document (GET /v3/openapi.json) to generate requests:
// its operations, which operation a method and path reach, the statuses and error codes
// each documents, and a small valid instance of a schema.
import { HTTP_METHODS, templatePattern, type DocumentedResponse, type Operation, type Schema } from '../../support/openapi';

export interface OpenApiDocument {
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, unknown>>;
}

export interface DocumentedOperation {
  template: string;
  method: string;
  pattern: RegExp;
  operation: Operation;
}

export class OpenApi {
  readonly operations: DocumentedOperation[] = [];

  constructor(readonly document: OpenApiDocument) {
    for (const [template, item] of Object.entries(document.paths)) {
      // Like the service's router (@koa/router matches paths case-insensitively: /V3/webhooks is /v3/webhooks).
      const pattern = templatePattern(template, 'i');
      for (const method of HTTP_METHODS) {
        const operation = item[method] as Operation | undefined;
        if (operation) this.operations.push({ template, method, pattern, operation });
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
    const pathname = new URL(path, 'http://fuzz.test').pathname;
    const parameters = (template: string) => (template.match(/\{/g) ?? []).length;
    return this.operations
      .filter((candidate) => candidate.method === method.toLowerCase() && candidate.pattern.test(pathname))
      .sort((a, b) => parameters(a.template) - parameters(b.template))[0];
  }

  /** Whether some documented operation has this path (with any method). */
  knowsPath(path: string): boolean {
    const pathname = new URL(path, 'http://fuzz.test').pathname;
    return this.operations.some((candidate) => candidate.pattern.test(pathname));
  }

  securitySchemes(operation: Operation): string[] {
    return (operation.security ?? this.document.security ?? []).flatMap((requirement) => Object.keys(requirement));
  }

  /** The node at a local `$ref`, followed until it is no `$ref`. */
  deref(node: Schema | undefined): Schema | undefined {
    let current = node;
    while (current && typeof current.$ref === 'string') {
      current = (current.$ref)
        .slice(2)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<any>((value, part) => value?.[part], this.document);
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
