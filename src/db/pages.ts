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

/** Which page: at most `limit` rows, after row `before` (the last of the previous page; none on the first). */
export interface PageQuery {
  limit: number;
  before?: string;
}

/**
 * What follows a listing's SELECT: `FROM … WHERE … ORDER BY … LIMIT …` for one page of owner
 * `ownerId`'s rows, newest first, with each column of `equal` holding its value (a filter
 * without a value filters nothing).
 */
export function newestFirstPage(
  sql: Db,
  listing: NewestFirst,
  ownerId: string,
  page: PageQuery,
  equal: Record<string, string | undefined> = {},
): PendingQuery<Row[]> {
  const filters = Object.entries(equal).reduce<PendingQuery<Row[]>>(
    (query, [column, value]) => (value ? sql`${query} AND ${sql(column)} = ${value}` : query),
    sql``,
  );
  return sql`
    FROM ${sql(listing.table)}
    WHERE ${sql(listing.owner)} = ${ownerId}
      ${filters}
      ${afterRow(sql, listing, ownerId, page.before)}
    ORDER BY ${sql(listing.time)} DESC, id DESC
    LIMIT ${page.limit}`;
}

/** `AND (time, id) <` those of row `before` of owner `ownerId`; nothing on the first page. */
function afterRow(sql: Db, { table, time, owner }: NewestFirst, ownerId: string, before: string | undefined): PendingQuery<Row[]> {
  if (!before) return sql``;
  return sql`AND (${sql(time)}, id) < (SELECT ${sql(time)}, id FROM ${sql(table)} WHERE id = ${before} AND ${sql(owner)} = ${ownerId})`;
}
