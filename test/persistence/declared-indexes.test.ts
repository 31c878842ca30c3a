// Indexes a plugin declares (EntityDecl.indexes): plain keys, and keys with the direction of the
// $orderby they serve, created in $orderby's null order (descending: nulls last) so the index
// delivers the order; a second migration finds nothing to change. The benchmark's plugin
// declares the workload's indexes this way (test/bench/plugin/sales.ts).

import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { expect, it } from 'vitest'
import { loadModel } from '../../server/model/load-plugins.ts'
import { createDatabase, databaseUrl, dropDatabase } from '../../server/tenancy/database-server.ts'
import { migrateDatabase } from '../../server/tenancy/tenant-admin.ts'
import { testDatabaseUrl } from '../support/test-server.ts'

const BENCH_PLUGIN = fileURLToPath(new URL('../bench/plugin', import.meta.url))

it('creates declared indexes with their directions in the null order of $orderby, once', async () => {
  const model = await loadModel(BENCH_PLUGIN)
  const database = `indexes_${randomBytes(4).toString('hex')}`
  await createDatabase(testDatabaseUrl(), database)
  const url = databaseUrl(testDatabaseUrl(), database)
  try {
    expect((await migrateDatabase('indexes', url, model, false)).statements).toBeGreaterThan(0)
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const { rows } = await client.query<{ indexdef: string }>(`select indexdef from pg_indexes where indexdef not like 'CREATE UNIQUE%' and tablename in ('Customer', 'Order', 'OrderLine') order by indexname`)
    await client.end()
    expect(rows.map((r) => r.indexdef.replace(/^.* USING btree /, '')).sort()).toEqual([
      '("Country", "Guid")',
      '("Name", "Guid")',
      '("Order_Guid")',
      '("Order_Guid", "Guid")',
      '("Product_Guid")',
      '("Customer_Guid")',
      '("Customer_Guid", "OrderDate" DESC NULLS LAST, "Number")',
      '("Status", "OrderDate" DESC NULLS LAST, "Number")',
    ].sort())
    expect((await migrateDatabase('indexes', url, model, false)).statements).toBe(0)
  } finally {
    await dropDatabase(testDatabaseUrl(), database)
  }
}, 60_000)

it('refuses an index key that is not a property with an optional direction, naming the key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-indexes-'))
  try {
    writeFileSync(join(dir, 'thing.ts'), `import { entity, p, plugin } from 'entityctl/plugin'
export default plugin({ entities: [entity('Thing', { properties: { Size: p.integer() }, indexes: [['Size sideways']] })] })
`)
    await expect(loadModel(dir)).rejects.toThrow(/'Size sideways' must be a property name, optionally followed by asc or desc/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
