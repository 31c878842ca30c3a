// Every row of the given entity tables as one hash: equal before and after a refused request
// means it wrote nothing (the tables are named by the test, never by input).

import type pg from 'pg'

export async function tablesHash(pool: pg.Pool, tables: readonly string[]): Promise<string> {
  const parts = tables.map((table) => `(select coalesce(md5(string_agg(t::text, '|' order by t."Guid")), '') from "${table}" t)`)
  const { rows } = await pool.query<{ hash: string }>(`select md5(${parts.join(` || '/' || `)}) as hash`)
  return rows[0].hash
}
