// What every command is given, and the helpers each reads its words and the API's answers with.
import type { ApiClient } from '../client';

/** An answer of the API that is an error: its status and the envelope's code and message. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

/** A command used the wrong way: what it takes, printed with the usage. */
export class UsageError extends Error {}

export interface CommandContext {
  client: ApiClient;
  /** The API's base URL, for what the client does not reach: the relay's WebSocket. */
  apiUrl: string;
  /** The words after the command's own, such as a webhook id. */
  args: string[];
  flags: Record<string, string | boolean | string[] | undefined>;
  json: boolean;
  out: (line: string) => void;
  /** Resolves when the command should stop following (tail): Ctrl-C. */
  stopped: Promise<void>;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's object, or an ApiFailure with the error envelope's code and message. */
export function must<T>({ data, error, response }: Answer<T>): T {
  if (error === undefined) return data as T;
  const envelope = (error as { error?: { code?: string; message?: string } }).error;
  throw new ApiFailure(response.status, envelope?.code ?? `HTTP_${response.status}`, envelope?.message ?? response.statusText);
}

export function arg(ctx: CommandContext, index: number, name: string): string {
  const value = ctx.args[index];
  if (value === undefined) throw new UsageError(`missing ${name}`);
  return value;
}

export function flag(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.flags[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a flag that may be given more than once, in order. */
export function repeatedFlag(ctx: CommandContext, name: string): string[] {
  const value = ctx.flags[name];
  return Array.isArray(value) ? value : [];
}

export function requiredFlag(ctx: CommandContext, name: string): string {
  const value = flag(ctx, name);
  if (value === undefined) throw new UsageError(`missing --${name}`);
  return value;
}

export const list = (value: string | undefined) => (value === undefined ? undefined : value.split(',').filter((item) => item !== ''));
