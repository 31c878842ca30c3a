// The JSON a read statement builds, in pieces the read and $apply compilers share: an
// entity's object and a collection's array, compact, and the rows of a collection answer,
// each with its size, within the byte budget.
//
// Objects are concatenated text, '{"Name":' || <value> || ',"Total":' || <value> || '}', not
// json_build_object/json_agg, which write `"k" : v, ` with spaces between the tokens while
// every other answer is compact. PostgreSQL also spends less on the concatenation: 0.73-0.88 s
// against 1.03-1.66 s for json_build_object(...)::text over 200,000 six-member objects, and
// string_agg 1.4-2.1 s against json_agg 1.8-3.2 s over the lines of 20,000 orders (alternating
// runs in one session).

import { ident, modelString } from './sql-builder.ts'

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

/** A member of a JSON object: its name (from the model) and the SQL of its value as JSON text. */
export interface JsonMember {
  readonly name: string
  readonly json: string
}

/** A value as JSON text, `null` for SQL's null (to_json of null is null). */
export function toJson(sql: string): string {
  return `coalesce(to_json(${sql})::text, 'null')`
}

/**
 * A JSON object as text. The names are written here as JSON (JSON.stringify) inside SQL string
 * literals, and come from the model only; the values are JSON text already (toJson, nested
 * objects and arrays). Concatenation has no argument limit, unlike json_build_object.
 */
export function jsonObject(members: readonly JsonMember[]): string {
  if (members.length === 0) return `'{}'`
  const parts = members.map((m, i) => `${modelString(`${i === 0 ? '{' : ','}${JSON.stringify(m.name)}:`)} || ${m.json}`)
  return `(${parts.join(' || ')} || '}')`
}

/** The rows' JSON objects (text) as one JSON array, in the given order; `[]` when none. */
export function jsonArray(element: string, orderBy: string): string {
  return `coalesce('[' || string_agg(${element}, ',' order by ${orderBy}) || ']', '[]')`
}
