import postgres from 'postgres';

export type Sql = postgres.Sql;
/** What a query runs on: the pool, or a transaction of it. */
export type Db = postgres.Sql | postgres.TransactionSql;
/** A transaction: what a change and the statements that must commit with it run on. */
export type Tx = postgres.TransactionSql;

/**
 * A connection pool: a process's pool, or a worker's pool of its delivery bookkeeping.
 * `statementTimeoutMs`: PostgreSQL cancels a statement of these connections that runs longer
 * (57014); none without it.
 */
export function createSql(databaseUrl: string, options: { max?: number; statementTimeoutMs?: number } = {}): Sql {
  return postgres(databaseUrl, {
    max: options.max ?? 10,
    connection: options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs },
    onnotice: () => {},
    // Dates stay as JS Date objects; the API formats them.
    transform: { undefined: null },
  });
}
