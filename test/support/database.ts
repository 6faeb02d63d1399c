import { afterAll, beforeAll, inject } from 'vitest';
import { migrate } from '../../src/db/migrate';
import { createSql, type Sql } from '../../src/db/sql';

/**
 * The test database, migrated, for tests of `src/db` that need no service around it;
 * `connections` is the pool's size (more to race statements against each other).
 */
export function useMigratedDatabase({ connections = 2 } = {}): { readonly sql: Sql } {
  const database = {} as { sql: Sql };
  beforeAll(async () => {
    database.sql = createSql(inject('databaseUrl'), { max: connections });
    await migrate(database.sql);
  });
  afterAll(() => database.sql?.end());
  return database;
}
