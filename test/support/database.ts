import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { migrate } from '../../src/db/migrate';
import { createSql, type Sql } from '../../src/db/sql';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';

const MIGRATIONS = path.resolve(__dirname, '../../src/db/migrations');

/** Who the audit log names for a change a test of `src/db` makes, as the API names a request's token and address. */
export const TEST_ACTOR = { tokenId: `tkn_${'0'.repeat(24)}`, tokenName: 'test', clientAddress: '192.0.2.1' };

/**
 * The test database, migrated, for tests of `src/db` that need no service around it;
 * `connections` is the pool's size (more to race statements against each other).
 */
export function useMigratedDatabase({ connections = 2 } = {}): { readonly sql: Sql } {
  const database = {} as { sql: Sql };
  beforeAll(async () => {
    database.sql = createSql(inject('databaseUrl'), { max: connections });
    await migrate(database.sql, { secrets: fixedSecretBox() });
  });
  afterAll(() => database.sql?.end());
  return database;
}

/**
 * Runs `upgrade` on a database of its own holding the schema of the release before migration
 * `version` (every migration before it, recorded as migrate() records them), then drops it:
 * for a migration's test on the rows an earlier release left. `url` is the database's, for a
 * service started on it.
 */
export async function withSchemaBefore(version: string, upgrade: (sql: Sql, url: string) => Promise<void>): Promise<void> {
  await withDatabaseOfItsOwn(`before_${version}`, async (sql, url) => {
    await sql`CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    for (const file of (await readdir(MIGRATIONS)).filter((file) => file.endsWith('.sql') && file < version).sort()) {
      await sql.unsafe(await readFile(path.join(MIGRATIONS, file), 'utf8'));
      await sql`INSERT INTO schema_migrations (version) VALUES (${file.replace(/\.sql$/, '')})`;
    }
    await upgrade(sql, url);
  });
}

/**
 * Runs `use` on a migrated database of its own (secrets sealed under the fixed test key), then
 * drops it: for a test that changes what every test of the shared database relies on, such as
 * the key its secrets are sealed under.
 */
export async function withMigratedDatabase(use: (sql: Sql, url: string) => Promise<void>): Promise<void> {
  await withDatabaseOfItsOwn('migrated', async (sql, url) => {
    await migrate(sql, { secrets: fixedSecretBox() });
    await use(sql, url);
  });
}

/** An empty database on the run's server, named from `prefix`, with a pool of a few connections; dropped after `use`. */
async function withDatabaseOfItsOwn(prefix: string, use: (sql: Sql, url: string) => Promise<void>): Promise<void> {
  const admin = createSql(inject('databaseUrl'), { max: 1 });
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${name}`;
  const sql = createSql(url.href, { max: 4 });
  try {
    await use(sql, url.href);
  } finally {
    await sql.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
