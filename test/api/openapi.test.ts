// The OpenAPI document read as a whole: valid OpenAPI 3.1, in step with the routers
// (both ways), and consistent in how it documents auth, bodies and errors. Everything
// here is derived from the document and the routers, so routes added later are checked
// without touching this file.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountAccess } from '../../src/api/account-access';
import { createApp, createRouters, type AppDependencies } from '../../src/api/app';
import { ApiError, apiErrors } from '../../src/api/errors';
import { buildOpenApiDocument } from '../../src/api/openapi';
import type { Sql } from '../../src/db/sql';
import { ROUTE_SCOPES } from '../../src/scopes';
import { createLogger } from '../../src/logger';
import type { Workflows } from '../../src/temporal/client';
import { API_TYPES_FILE, renderApiTypes } from '../../scripts/api-types';
import { OpenApi, type DocumentedResponse, type Operation } from '../support/openapi';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';

const openApi = new OpenApi(buildOpenApiDocument());
const { document } = openApi;

const label = (path: string, method: string) => `${method.toUpperCase()} ${path}`;

const deref = openApi.deref.bind(openApi);

/** The codes an error response's envelope allows (asserting it is the envelope). */
function envelopeCodes(response: DocumentedResponse, where: string): unknown[] | undefined {
  const schema = deref(response.content?.['application/json']?.schema);
  expect(schema?.type, `${where} has a JSON body`).toBe('object');
  expect(Object.keys(schema!.properties ?? {}), `${where} is the error envelope`).toEqual(['error']);
  expect(schema!.required, where).toEqual(['error']);
  const error = deref(schema!.properties.error)!;
  expect(error.required, where).toEqual(expect.arrayContaining(['code', 'message']));
  return deref(error.properties?.code)?.enum;
}

/** The API's error codes and their statuses, from the factories every error is made by. */
function knownErrorCodes(): Map<string, number> {
  const codes = new Map<string, number>();
  for (const [name, factory] of Object.entries(apiErrors)) {
    const error = (factory as (...args: unknown[]) => unknown)('dummy', 'dummy');
    expect(error, name).toBeInstanceOf(ApiError);
    codes.set((error as ApiError).code, (error as ApiError).status);
  }
  return codes;
}

const noDatabase = (() => {
  throw new Error('no database in this test');
}) as unknown as Sql;

/** Dependencies for routes that touch neither PostgreSQL nor Temporal (the document, the route table). */
const offline: AppDependencies = {
  sql: noDatabase,
  secrets: fixedSecretBox(),
  // Never started: nothing here reaches a route that needs a token.
  access: createAccountAccess(noDatabase, { account: { perSecond: 1, burst: 1 }, address: { perSecond: 1, burst: 1 }, accountInFlight: 4 }),
  workflows: {} as Workflows,
  logger: createLogger('silent'),
  internalApiToken: 'unused',
  checkUrl: async (raw) => new URL(raw),
  deliveryTimeoutMs: 1000,
};

/** Routes the routers serve, as "METHOD /path/{param}" (HEAD and middleware-only layers left out). */
function servedRoutes(): string[] {
  const routes = new Set<string>();
  for (const router of createRouters(offline)) {
    for (const layer of router.stack) {
      const methods = layer.methods.filter((method) => method !== 'HEAD');
      if (methods.length === 0) continue;
      const path = String(layer.path).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      expect(path, `route path ${String(layer.path)} can be written as an OpenAPI template`).toMatch(/^(\/[A-Za-z0-9_.{}-]+)+$/);
      for (const method of methods) routes.add(label(path, method));
    }
  }
  return [...routes].sort();
}

describe('GET /v3/openapi.json', () => {
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    // The document route touches neither PostgreSQL nor Temporal.
    const app = createApp(offline);
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    if (!server) return;
    server.close();
    await once(server, 'close');
  });

  it('answers 200 without a token with a document that is valid OpenAPI 3.1', async () => {
    const response = await fetch(`${baseUrl}/v3/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    const served = (await response.json()) as Record<string, unknown>;
    expect(served).toEqual(JSON.parse(JSON.stringify(document)));
    expect(served.openapi).toMatch(/^3\.1\.\d+$/);

    const validator = new Validator();
    const result = await validator.validate(structuredClone(served));
    if (!result.valid) console.error('OpenAPI validation errors:', JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is what the typed client was generated from: src/client/generated/api-types.ts (npm run generate:api-types)', async () => {
    const served = (await (await fetch(`${baseUrl}/v3/openapi.json`)).json()) as object;
    expect(await renderApiTypes(served)).toBe(readFileSync(API_TYPES_FILE, 'utf8'));
  });
});

describe('the document and the routers', () => {
  it('documents every route the routers serve, and the routers serve every documented operation', () => {
    const served = servedRoutes();
    const documented = openApi.operations.map(({ template, method }) => label(template, method)).sort();
    expect(served.length).toBeGreaterThan(0);
    expect(
      documented.filter((route) => !served.includes(route)),
      'documented but not served',
    ).toEqual([]);
    expect(
      served.filter((route) => !documented.includes(route)),
      'served but not documented',
    ).toEqual([]);
  });

  it("names every public route in the route table (ROUTE_SCOPES), and documents each operation's scopes as the table has them", () => {
    const publicRoutes = servedRoutes().filter((route) => / \/v3\//.test(route) && route !== 'GET /v3/openapi.json');
    expect(Object.keys(ROUTE_SCOPES).sort()).toEqual(publicRoutes);
    for (const { template, method, operation } of openApi.operations) {
      const route = label(template, method);
      const scopes = (ROUTE_SCOPES as Record<string, readonly string[]>)[route];
      if (!publicRoutes.includes(route)) {
        expect(operation, `${route} names no scopes`).not.toHaveProperty('x-required-scopes');
        continue;
      }
      expect(operation, route).toHaveProperty('x-required-scopes', scopes);
      expect(operation.security, route).toEqual([{ accountToken: scopes }]);
      expect(operation.description, route).toContain(scopes.length === 0 ? 'any scopes' : `Needs the token scope`);
      // 403 exactly where a token can lack a scope, and only INSUFFICIENT_SCOPE.
      expect('403' in operation.responses, `${route} documents 403 iff it needs a scope`).toBe(scopes.length > 0);
      if (scopes.length > 0) expect(envelopeCodes(operation.responses['403'], `${route} 403`)).toEqual(['INSUFFICIENT_SCOPE']);
    }
  });

  it('gives every operation a unique operationId and declares every path parameter', () => {
    const ids = openApi.operations.map(({ operation }) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { template, method, operation } of openApi.operations) {
      const templated = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      const item = document.paths[template];
      const parameters = [...((item.parameters as Operation['parameters']) ?? []), ...(operation.parameters ?? [])];
      const declared = parameters
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name)
        .sort();
      expect(declared, label(template, method)).toEqual(templated);
    }
  });
});

describe('how the document describes auth, bodies and errors', () => {
  it('documents 401 exactly on the operations that need a token, with a known security scheme', () => {
    const schemes = Object.keys(document.components!.securitySchemes!);
    let secured = 0;
    for (const { template, method, operation } of openApi.operations) {
      const security = operation.security ?? document.security ?? [];
      const needsToken = security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0);
      if (needsToken) secured++;
      for (const requirement of security) for (const scheme of Object.keys(requirement)) expect(schemes).toContain(scheme);
      expect('401' in operation.responses, `${label(template, method)} documents 401 iff it needs a token`).toBe(needsToken);
    }
    expect(secured).toBeGreaterThan(0);
  });

  it('documents 413 and 415, and 400 MALFORMED_JSON and VALIDATION_FAILED, on every operation with a request body', () => {
    const withBody = openApi.operations.filter(({ operation }) => operation.requestBody);
    expect(withBody.length).toBeGreaterThan(0);
    for (const { template, method, operation } of withBody) {
      const where = label(template, method);
      expect(Object.keys(operation.requestBody!.content), where).toEqual(['application/json']);
      for (const status of ['400', '413', '415']) expect(operation.responses[status], `${where} documents ${status}`).toBeDefined();
      expect(envelopeCodes(operation.responses['413'], `${where} 413`)).toEqual(['PAYLOAD_TOO_LARGE']);
      expect(envelopeCodes(operation.responses['415'], `${where} 415`)).toEqual(['UNSUPPORTED_MEDIA_TYPE']);
      expect(envelopeCodes(operation.responses['400'], `${where} 400`)).toEqual(
        expect.arrayContaining(['MALFORMED_JSON', 'VALIDATION_FAILED']),
      );
    }
  });

  it('gives every error response the envelope listing its codes, each a code the API has, with the status the API gives it', () => {
    const known = knownErrorCodes();
    expect(known.size).toBeGreaterThan(0);
    for (const { template, method, operation } of openApi.operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status !== 'default' && Number(status) < 400) continue;
        const where = `${label(template, method)} ${status}`;
        const codes = envelopeCodes(response, where);
        expect(Array.isArray(codes) && codes.length > 0, `${where} lists its codes in error.code.enum`).toBe(true);
        for (const code of codes!) {
          expect([...known.keys()], `${where}: ${String(code)} is an ErrorCode`).toContain(code);
          expect(known.get(code as string), `${where}: the API answers ${String(code)} with this status`).toBe(
            status === 'default' ? 500 : Number(status),
          );
        }
      }
    }
  });

  it('names the route-independent errors (unknown route, wrong method) in info.description, with codes the API has', () => {
    const known = knownErrorCodes();
    for (const code of ['NOT_FOUND', 'METHOD_NOT_ALLOWED']) {
      expect(known.has(code)).toBe(true);
      expect(document.info!.description!).toContain(code);
    }
    expect(document.info!.description!).toMatch(/\b404 NOT_FOUND\b/);
    expect(document.info!.description!).toMatch(/\b405 METHOD_NOT_ALLOWED\b/);
  });
});
