// The service's HTTP API, as the harness calls it.
import { type Account } from './types';

export async function call<T = unknown>(
  baseUrl: string,
  method: string,
  route: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

export async function createAccount(
  internal: <T>(method: string, route: string, body: unknown) => Promise<{ status: number; body: T }>,
): Promise<Account> {
  const created = await internal<Account>('POST', '/internal/v3/accounts', { name: 'bench' });
  if (created.status !== 201) throw new Error(`creating an account answered ${created.status}`);
  return created.body;
}
