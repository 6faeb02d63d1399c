// Pages of a list newest first, as every listing route answers them: `limit` (1 to 100,
// default 20) and `next`, the id to pass as `before` for the page after.

const DEFAULT_PAGE_SIZE = 20;

/** A page of at most `limit` rows; `fetch` is asked for one more, which tells whether a next page exists. */
export async function pageOf<T extends { id: string }>(
  limit: string | undefined,
  fetch: (limit: number) => Promise<T[]>,
): Promise<{ data: T[]; next: string | null }> {
  const pageSize = limit === undefined ? DEFAULT_PAGE_SIZE : Number(limit);
  const rows = await fetch(pageSize + 1);
  const data = rows.slice(0, pageSize);
  return { data, next: rows.length > pageSize ? data.at(-1)!.id : null };
}
