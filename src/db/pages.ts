// The keyset of every newest-first listing (a webhook's delivery log, an account's notices and
// audit log): the rows after the last one of the previous page, by (time, id). That row is
// looked up within the same owner, so the id of another owner's row gives an empty page.
import type { PendingQuery, Row } from 'postgres';
import type { Db } from './sql';

/** A listing's table, the column it is ordered by (then by id), and the column of its owner. */
export interface NewestFirst {
  table: string;
  time: string;
  owner: string;
}

/** `AND (time, id) <` those of row `before` of owner `ownerId`; nothing on the first page. */
export function afterRow(sql: Db, { table, time, owner }: NewestFirst, ownerId: string, before: string | undefined): PendingQuery<Row[]> {
  if (!before) return sql``;
  return sql`AND (${sql(time)}, id) < (SELECT ${sql(time)}, id FROM ${sql(table)} WHERE id = ${before} AND ${sql(owner)} = ${ownerId})`;
}
