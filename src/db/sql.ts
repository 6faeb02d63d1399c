import postgres from 'postgres';

export type Sql = postgres.Sql;
/** What a query runs on: the pool, or a transaction of it. */
export type Db = postgres.Sql | postgres.TransactionSql;
/** A transaction: what a change and the statements that must commit with it run on. */
export type Tx = postgres.TransactionSql;

/** The one connection pool of a process. */
export function createSql(databaseUrl: string, options: { max?: number } = {}): Sql {
  return postgres(databaseUrl, {
    max: options.max ?? 10,
    onnotice: () => {},
    // Dates stay as JS Date objects; the API formats them.
    transform: { undefined: null },
  });
}
