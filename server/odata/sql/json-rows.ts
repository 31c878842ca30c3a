// The JSON a read statement builds, in pieces the read and $apply compilers share: an
// entity's object (json_build_object, in chunks past its argument limit) and the rows of a
// collection answer, each with its size, within the byte budget.

import { ident } from './sql-builder.ts'

/**
 * The rows of a collection answer from `items` (ordered rows with a `body`): each with its
 * size, its body only when within `maxBytes`, and the count beside when there is one.
 */
export function itemRows(items: string, maxBytes: number, count?: string, extra: readonly string[] = []): string {
  const columns = ['octet_length(j.body) as size', `case when octet_length(j.body) <= ${Math.floor(maxBytes)} then j.body end as body`, ...extra.map((c) => `j.${ident(c)}`)]
  const rows = `select ${columns.join(', ')} from (${items} offset 0) j`
  if (count === undefined) return rows
  // Left join: an empty page is one row with the count alone. A nested loop over the single
  // count row keeps the order of the page.
  return `select c.count, p.* from (${count}) c(count) left join lateral (${rows}) p on true`
}

/** json_build_object takes at most 100 arguments; wider entities are merged from chunks. */
export function buildObject(pairs: readonly string[]): string {
  if (pairs.length <= 50) return `json_build_object(${pairs.join(', ')})`
  const chunks: string[] = []
  for (let i = 0; i < pairs.length; i += 50) chunks.push(`jsonb_build_object(${pairs.slice(i, i + 50).join(', ')})`)
  return `(${chunks.join(' || ')})::json`
}
