import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { migrate } from '../../src/db/migrate';
import { createSql, type Sql } from '../../src/db/sql';
import { fixedSecretBox } from '../../scripts/lib/fixed-secret-keys';

const MIGRATIONS = path.resolve(__dirname, '../../src/db/migrations');

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
 * for a migration's test on the rows an earlier release left.
 */
export async function withSchemaBefore(version: string, upgrade: (sql: Sql) => Promise<void>): Promise<void> {
  const admin = createSql(inject('databaseUrl'), { max: 1 });
  const name = `before_${version}_${randomBytes(4).toString('hex')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${name}`;
  const sql = createSql(url.href, { max: 1 });
  try {
    await sql`CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    for (const file of (await readdir(MIGRATIONS)).filter((file) => file.endsWith('.sql') && file < version).sort()) {
      await sql.unsafe(await readFile(path.join(MIGRATIONS, file), 'utf8'));
      await sql`INSERT INTO schema_migrations (version) VALUES (${file.replace(/\.sql$/, '')})`;
    }
    await upgrade(sql);
  } finally {
    await sql.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
