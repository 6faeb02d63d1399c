// What PostgreSQL keeps on disk, read as a thief of the disk or of a backup would: the files
// under its data directory (tables, indexes, catalogs, WAL) and a dump of its tables; and which of them
// hold given secrets, in any of the forms a secret could be written in.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sql } from '../../src/db/sql';

/** The data directory of the server `sql` is connected to (the tests run where it is readable). */
export async function dataDirectory(sql: Sql): Promise<string> {
  await sql`CHECKPOINT`; // every change on disk: in its table's file, and in the WAL
  const [{ data_directory: directory }] = await sql<{ data_directory: string }[]>`SHOW data_directory`;
  return directory;
}

/** The directory of the connected database's own files (tables, indexes, its catalogs). */
export async function databaseDirectory(sql: Sql): Promise<string> {
  const [{ oid }] = await sql<{ oid: number }[]>`SELECT oid FROM pg_database WHERE datname = current_database()`;
  return path.join(await dataDirectory(sql), 'base', String(oid));
}

/** Every file under `directory`, however deep. */
export async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * Every row of the connected database as a dump holds it: each table's rows in their text form
 * (`SELECT t::text`), the values as `pg_dump` writes them. Read through the server itself, so
 * that no client of the server's version is needed (the embedded server is newer than Debian's
 * `pg_dump`), and by plain queries: postgres.js's COPY streams do not always end.
 */
export async function tablesDump(sql: Sql): Promise<Buffer> {
  const tables = await sql<{ name: string }[]>`
    SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
    WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`;
  const rows: string[] = [];
  for (const { name } of tables) {
    for (const { row } of await sql.unsafe<{ row: string }[]>(`SELECT t::text AS row FROM ${name} t`)) rows.push(row);
  }
  return Buffer.from(rows.join('\n'));
}

/**
 * The forms a signing secret (`whsec_` and 43 characters of base64url) could be written in:
 * the whole of it, its body after the prefix, and the 32 bytes that body encodes.
 */
export function secretForms(secret: string): Buffer[] {
  const body = secret.replace(/^whsec_/, '');
  const forms = [Buffer.from(secret, 'utf8'), Buffer.from(body, 'utf8')];
  if (/^[A-Za-z0-9_-]{43}$/.test(body)) forms.push(Buffer.from(body, 'base64url'));
  return forms;
}

/** Each place (a file, or `label` for a buffer) where one of the secrets is found, in any of its forms. */
export async function placesHolding(
  secrets: readonly string[],
  where: { files?: readonly string[]; buffers?: Record<string, Buffer> },
): Promise<string[]> {
  const needles = secrets.flatMap((secret) => secretForms(secret).map((form) => ({ secret, form })));
  const found: string[] = [];
  const search = (place: string, bytes: Buffer) => {
    for (const { secret, form } of needles) if (bytes.includes(form)) found.push(`${place}: ${secret.slice(0, 10)}…`);
  };
  for (const file of where.files ?? []) {
    // A file may go while the directory is read (a WAL segment recycled, a table rewritten).
    const bytes = await readFile(file).catch(() => null);
    if (bytes) search(file, bytes);
  }
  for (const [label, bytes] of Object.entries(where.buffers ?? {})) search(label, bytes);
  return found;
}
