import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TransactionSql } from 'postgres';
import type { SecretBox } from '../secret-keys';
import { sealClearSecrets } from './sealed-secrets';
import type { Sql } from './sql';

const MIGRATIONS_DIR = path.join(__dirname, 'migrations');
// Any constant works; it keeps two processes starting at once from migrating together.
const MIGRATION_LOCK_ID = 7_340_211;

/** What a migration needs beyond SQL: the keys that seal signing secrets. */
export interface MigrationContext {
  secrets: SecretBox;
}

/**
 * The steps SQL cannot take, each run right after the SQL file of its version, in the same
 * transaction: 022's seals the signing secrets a release before stored in clear.
 */
const CODE_STEPS: Record<string, (tx: TransactionSql, context: MigrationContext) => Promise<void>> = {
  '022_sealed_secrets': (tx, { secrets }) => sealClearSecrets(tx, secrets),
};

/** The steps that cannot run inside a transaction, run once the migrations have committed. */
const AFTER_COMMIT: Record<string, (sql: Sql) => Promise<unknown>> = {
  // The planner's statistics may hold samples of the clear secrets (ANALYZE keeps a column's
  // most common values and a histogram of it): dropping the column deleted those rows, and
  // rewriting the catalog removes their bytes from its files.
  '022_sealed_secrets': (sql) => sql`VACUUM FULL pg_statistic`,
};

/**
 * Applies the versioned SQL files of migrations/ in name order, each once (with its code step,
 * if it has one), all in one transaction, recording them in schema_migrations; then the steps
 * of those applied that must follow the commit. Returns the versions applied.
 */
export async function migrate(sql: Sql, context: MigrationContext): Promise<string[]> {
  const applied = await applyMigrations(sql, context);
  for (const version of applied) await AFTER_COMMIT[version]?.(sql);
  return applied;
}

async function applyMigrations(sql: Sql, context: MigrationContext): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    const done = new Set((await tx<{ version: string }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      const version = file.replace(/\.sql$/, '');
      if (done.has(version)) continue;
      await tx.unsafe(await readFile(path.join(MIGRATIONS_DIR, file), 'utf8'));
      await CODE_STEPS[version]?.(tx, context);
      await tx`INSERT INTO schema_migrations (version) VALUES (${version})`;
      applied.push(version);
    }
    return applied;
  });
}
