// What the write-path tests (test/persistence) share: a test server's tenant as the test itself
// sees it (a registry of its own, for units the test opens), a recorder of that database's
// statements, a token, and a customer with three products priced 12.99, 63.78 and 3.57 (an
// order of 2, 3 and 5 of them totals 235.17).

import { randomUUID } from 'node:crypto'
import { loadConfig } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import type { TenantDatabase } from '../../server/tenancy/tenant-database.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { recordStatements, type StatementRecorder } from './statement-recorder.ts'
import { call, TEST_DATABASE_URL, type TestServer } from './test-server.ts'

export interface WriteFixture {
  readonly db: TenantDatabase
  readonly recorder: StatementRecorder
  readonly token: string
  readonly customer: string
  readonly products: readonly string[]
  /** Adds a line of 100 (1 × 100) to `order` by SQL, leaving the order's row alone, as an admin's script might. */
  addLineBySql(order: string): Promise<void>
  /** Stops recording and closes the registry (not the server). */
  close(): Promise<void>
}

export async function writeFixture(server: TestServer): Promise<WriteFixture> {
  const token = await server.token()
  const config = loadConfig(server.configPath, {})
  const registry = new TenantRegistry(config, await loadModel(config.Server.PluginsDir), TEST_DATABASE_URL)
  const db = (await registry.get(server.tenants[0]))!
  const recorder = recordStatements(() => config.Tenants.get(server.tenants[0])!.Database)
  const post = async (set: string, body: unknown): Promise<string> => {
    const response = await call(`${server.api}/${set}`, { method: 'POST', token, body })
    if (response.status !== 200) throw new Error(`POST ${set}: ${response.status} ${response.text}`)
    return response.body.Guid
  }
  const customer = await post('Customers', { Name: 'Petra Hoffmann', Country: 'de' })
  const products: string[] = []
  for (const [code, price] of [['P1', 12.99], ['P2', 63.78], ['P3', 3.57]] as const) {
    products.push(await post('Products', { Code: code, Name: `Product ${code}`, Price: price }))
  }
  return {
    db,
    recorder,
    token,
    customer,
    products,
    async addLineBySql(order) {
      await db.pool.query(
        `insert into "OrderLine" ("Guid", "Order_Guid", "Product_Guid", "Quantity", "UnitPrice", "LineTotal", "Title", "_Version")
         values ($1, $2, $3, 1, 100, 100, 'by SQL', 1)`,
        [randomUUID(), order, products[0]],
      )
    },
    async close() {
      recorder.restore()
      await registry.close()
    },
  }
}
