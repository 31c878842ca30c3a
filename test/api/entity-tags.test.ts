// An ETag tells rows apart by the transaction that wrote them (server/persistence/entity-tag.ts)
// without showing its id: transaction ids are one counter for the whole PostgreSQL cluster,
// which every tenant's database may share, so a client reading them would count the writes of
// every other tenant (and a user the writes to types they cannot read).

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { loadConfig } from '../../server/config/load-config.ts'
import { entityTag, entityTagSql } from '../../server/persistence/entity-tag.ts'
import { call, onConnection, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'

let server: TestServer
const tokens = new Map<string, string>()

beforeAll(async () => {
  server = await startTestServer({ tenants: ['a', 'b'] })
  for (const tenant of server.tenants) tokens.set(tenant, await server.token(tenant))
})
afterAll(async () => server?.stop())

function tenantUrl(tenant: string): string {
  return databaseUrl(testDatabaseUrl(), loadConfig(server.configPath, {}).Tenants.get(tenant)!.Database)
}

const api = (tenant: string, path: string, options: Parameters<typeof call>[1] = {}) => call(`${server.api}/${path}`, { token: tokens.get(tenant), ...options })

/** The xmin of the customer's row, as PostgreSQL has it. */
const xminOf = (tenant: string, guid: string) =>
  onConnection(tenantUrl(tenant), async (client) => (await client.query<{ xmin: string }>(`select xmin::text as xmin from "Customer" where "Guid" = $1`, [guid])).rows[0].xmin)

async function create(tenant: string, name: string): Promise<{ guid: string; etag: string }> {
  const response = await api(tenant, 'Customers', { method: 'POST', body: { Name: name } })
  expect(response.status).toBe(200)
  return { guid: response.body.Guid, etag: response.body['@odata.etag'] }
}

/** The part of an ETag after the version. */
const hashOf = (etag: string) => /^W\/"1\.([^"]*)"$/.exec(etag)?.[1]

describe('ETags', () => {
  it('carry no xmin: entities written by consecutive transactions get tags that do not count them', async () => {
    const [tenant] = server.tenants
    const first = await create(tenant, 'First')
    const second = await create(tenant, 'Second')
    const xmins = [await xminOf(tenant, first.guid), await xminOf(tenant, second.guid)]
    expect(Number(xmins[1])).toBeGreaterThan(Number(xmins[0]))
    for (const [index, { guid, etag }] of [first, second].entries()) {
      const hash = hashOf(etag)
      expect(hash, etag).toMatch(/^[0-9a-f]{12}$/)
      expect(hash).not.toContain(xmins[index])
      // The read (made in SQL) says what the write's answer (made in Node) said.
      expect((await api(tenant, `Customers(${guid})`)).headers.get('etag')).toBe(etag)
    }
    expect(hashOf(first.etag)).not.toBe(hashOf(second.etag))
    expect(Number.isNaN(Number(hashOf(second.etag)))).toBe(true)
  })

  it('match between reads and writes: an If-Match read from a GET writes, and the write answers the ETag the next GET reads', async () => {
    const [tenant] = server.tenants
    const { guid } = await create(tenant, 'Matched')
    const read = (await api(tenant, `Customers(${guid})`)).headers.get('etag')!
    const changed = await api(tenant, `Customers(${guid})`, { method: 'PATCH', body: { City: 'Rome' }, headers: { 'If-Match': read } })
    expect(changed.status).toBe(204)
    const now = changed.headers.get('etag')!
    expect(now).toMatch(/^W\/"2\.[0-9a-f]{12}"$/)
    expect(now).not.toContain(await xminOf(tenant, guid))
    expect((await api(tenant, `Customers(${guid})`)).headers.get('etag')).toBe(now)
    expect((await api(tenant, `Customers(${guid})`, { method: 'PATCH', body: { City: 'Oslo' }, headers: { 'If-Match': read } })).status).toBe(412)
  })

  it('read the secret once per statement, not once per row (an InitPlan)', async () => {
    const [tenant] = server.tenants
    await create(tenant, 'Planned')
    const plan = await onConnection(tenantUrl(tenant), async (client) => {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, costs off, timing off, summary off) select ${entityTagSql('t')} from "Customer" t`)
      return rows.map((row) => row['QUERY PLAN']).join('\n')
    })
    expect(plan).toMatch(/InitPlan[\s\S]*Seq Scan on "_EntityTagKey" \(actual rows=1 loops=1\)/)
  })

  it('differ between tenants for the same xmin: each database hashes it with a secret of its own', async () => {
    const tags = await Promise.all(
      server.tenants.map((tenant) =>
        onConnection(tenantUrl(tenant), async (client) => {
          const { rows } = await client.query<{ tag: string; secret: string }>(
            `select ${entityTagSql('t')} as tag, (select "Secret" from "_EntityTagKey") as secret from (select 1 as "_Version", '1000'::xid as xmin) t`,
          )
          // Node, for the writes, makes the tag SQL makes for the reads.
          expect(entityTag(1, '1000', rows[0].secret)).toBe(rows[0].tag)
          return rows[0].tag
        }),
      ),
    )
    expect(tags[0]).toMatch(/^W\/"1\.[0-9a-f]{12}"$/)
    expect(tags[0]).not.toBe(tags[1])
  })
})
