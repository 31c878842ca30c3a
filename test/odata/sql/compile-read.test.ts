// The read compiler as a table (Kysely's testSql): a URL on the demo model, bound and planned,
// → the statement's text and parameters, and where the path's keys went; then each statement
// runs on PostgreSQL against the demo schema, as Kysely runs after testSql: the text catches a
// change of shape, the run catches wrong SQL. The @odata.context URL is never a parameter.

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Model } from '../../../server/model/model.ts'
import { planCollectionRead, planCount, planEntityRead } from '../../../server/odata/plan/read-plan.ts'
import { compileCollectionRead, compileCount, compileEntityRead, type CompiledRead } from '../../../server/odata/sql/compile-read.ts'
import { databaseUrl } from '../../../server/tenancy/database-server.ts'
import { call, startTestServer, testDatabaseUrl, type TestServer } from '../../support/test-server.ts'
import { demoModel } from '../metadata/demo-model.ts'
import { bindUrl } from '../semantic/bind-url.ts'

const K = '0193a1b2-0000-7000-8000-000000000001'
const LIMITS = { maxTop: 500, maxResultItems: 1_000_000_000 }
const MAX_BYTES = 1000

// Entity JSON as the compiler writes it, compact (json-rows.ts): '{"Name":' || <value> || … || '}'.
const VALUE = (sql: string) => `coalesce(to_json(${sql})::text, 'null')`
const OBJECT = (...members: [name: string, json: string][]) => `(${members.map(([name, json], i) => `'${i ? ',' : '{'}"${name}":' || ${json}`).join(' || ')} || '}')`
const TAG = (t: string) => `'W/"' || ${t}."_Version" || case when ${t}."_Version" < 0 then '' else '.' || substr(md5((select "Secret" from "_EntityTagKey") || ${t}.xmin::text), 1, 12) end || '"'`
const ETAG = (t: string): [string, string] => ['@odata.etag', VALUE(TAG(t))]
const COLUMN = (t: string, name: string): [string, string] => [name, VALUE(`${t}."${name}"`)]
const ROWS = `select octet_length(j.body) as size, case when octet_length(j.body) <= ${MAX_BYTES} then j.body end as body`

let model: Model
beforeAll(async () => {
  model = await demoModel()
})

function compile(url: string): CompiledRead {
  const read = bindUrl(model, url)
  if (read.kind === 'entity') return compileEntityRead(planEntityRead(read, LIMITS), MAX_BYTES)
  if (url.includes('/$count')) return compileCount(planCount(read))
  return compileCollectionRead(planCollectionRead(read, LIMITS), MAX_BYTES)
}

const CASES: [url: string, sql: string, params: unknown[], keySlots: number[]][] = [
  [
    'Orders?$filter=Total gt 100&$top=2&$select=Number',
    `${ROWS} from (select ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), COLUMN('t0', 'Number'))} as body from (select t0.*, t0.xmin, t0."Guid" as "@o0" from "Order" t0  where t0."Total" > $1::numeric order by t0."Guid" limit 2) t0 order by t0."@o0" offset 0) j`,
    ['100'],
    [],
  ],
  // Server-driven paging: one row more than the page, numbered, its JSON not built.
  [
    'Customers?$select=Name',
    `${ROWS}, j."more" from (select case when t0."@n" <= 500 then ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), COLUMN('t0', 'Name'))} end as body, t0."@n" > 500 as more from (select q.*, row_number() over (order by q."@o0") as "@n" from (select t0.*, t0.xmin, t0."Guid" as "@o0" from "Customer" t0   order by t0."Guid" limit 501) q) t0 order by t0."@o0" offset 0) j`,
    [],
    [],
  ],
  // $count: the filtered relation (its join, its filter, its sort keys) written once, read by the count and by the page.
  [
    "Orders?$filter=Customer/Country eq 'DE'&$orderby=OrderDate desc&$top=10&$skip=20&$count=true",
    `with "@filtered" as not materialized (select t0.*, t0.xmin, t0."OrderDate" as "@o0", t0."Guid" as "@o1" from "Order" t0 left join "Customer" j0 on j0."Guid" = t0."Customer_Guid" where j0."Country" = $1::text) ` +
      `select c.count, p.* from (select count(*) from "@filtered") c(count) left join lateral (${ROWS} from (select ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'))} as body from (select t0.* from "@filtered" t0 order by t0."@o0" desc nulls last, t0."@o1" limit 10 offset 20) t0 order by t0."@o0" desc nulls last, t0."@o1" offset 0) j) p on true`,
    ['DE'],
    [],
  ],
  // An expand's count reads the members' relation as compiled once: its parameter is the page's.
  [
    'Orders?$top=1&$expand=Lines($select=Quantity;$filter=Quantity ge 2;$top=3;$count=true)',
    // The count first: control information precedes the property it is about.
    `${ROWS} from (select ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), ['Lines@odata.count', `(select count(*)::text from "OrderLine" t1  where t1."Order_Guid" = t0."Guid" and t1."Quantity" >= $1::int)`], ['Lines', `(select coalesce('[' || string_agg(${OBJECT(ETAG('t1'), COLUMN('t1', 'Guid'), COLUMN('t1', 'Quantity'))}, ',' order by t1."@o0") || ']', '[]') from (select t1.*, t1.xmin, t1."Guid" as "@o0" from "OrderLine" t1  where t1."Order_Guid" = t0."Guid" and t1."Quantity" >= $1::int order by t1."Guid" limit 3) t1)`])} as body from (select t0.*, t0.xmin, t0."Guid" as "@o0" from "Order" t0   order by t0."Guid" limit 1) t0 order by t0."@o0" offset 0) j`,
    [2],
    [],
  ],
  [
    `Customers(${K})/Orders?$select=Number&$top=5`,
    // The parent is checked first: a missing customer is one row `missing` (404), not an empty page.
    `select m.missing, r.* from (select not exists (select 1 from "Customer" p where p."Guid" = $1::uuid) as missing) m left join lateral (${ROWS} from (select ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), COLUMN('t0', 'Number'))} as body from (select t0.*, t0.xmin, t0."Guid" as "@o0" from "Order" t0  where t0."Customer_Guid" = $1::uuid order by t0."Guid" limit 5) t0 order by t0."@o0" offset 0) j) r on not m.missing`,
    [K],
    [0],
  ],
  [
    `Orders(${K})?$select=Number&$expand=Customer($select=Name)`,
    `${ROWS}, j."etag" from (select ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), COLUMN('t0', 'Number'), ['Customer', `coalesce((select ${OBJECT(ETAG('t1'), COLUMN('t1', 'Guid'), COLUMN('t1', 'Name'))} from "Customer" t1 where t1."Guid" = t0."Customer_Guid"), 'null')`])} as body, ${TAG('t0')} as etag from "Order" t0 where t0."Guid" = $1::uuid offset 0) j`,
    [K],
    [0],
  ],
  [
    `Orders(${K})/Customer?$select=Name`,
    `${ROWS}, j."etag" from (select ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), COLUMN('t0', 'Name'))} as body, ${TAG('t0')} as etag from "Customer" t0 where t0."Guid" = (select p."Customer_Guid" from "Order" p where p."Guid" = $1::uuid) offset 0) j`,
    [K],
    [0],
  ],
  [`Customers(${K})/Orders/$count?$filter=Total gt 100`, `select case when exists (select 1 from "Customer" p where p."Guid" = $1::uuid) then (select count(*)::text from "Order" t0  where t0."Customer_Guid" = $1::uuid and t0."Total" > $2::numeric) end as body`, [K, '100'], [0]],
  // Date arithmetic (URL Conventions 4.01 §5.1.1.2): the duration a parameter cast to interval,
  // its sign on each number as PostgreSQL reads ISO 8601; the date of midnight moved.
  [
    "Orders?$filter=OrderDate sub duration'-P1DT12H' gt 2024-01-01&$select=Number",
    `${ROWS}, j."more" from (select case when t0."@n" <= 500 then ${OBJECT(ETAG('t0'), COLUMN('t0', 'Guid'), COLUMN('t0', 'Number'))} end as body, t0."@n" > 500 as more from (select q.*, row_number() over (order by q."@o0") as "@n" from (select t0.*, t0.xmin, t0."Guid" as "@o0" from "Order" t0  where (t0."OrderDate" - $1::interval)::date > $2::date order by t0."Guid" limit 501) q) t0 order by t0."@o0" offset 0) j`,
    ['P-1DT-12H', '2024-01-01'],
    [],
  ],
]

describe('compile: plan → SQL text and parameters', () => {
  it.each(CASES)('%s', (url, sql, params, keySlots) => {
    const compiled = compile(url)
    expect(compiled.sql).toBe(sql)
    expect(compiled.params).toEqual(params)
    expect(compiled.keySlots).toEqual(keySlots)
  })
})

describe('compile: the statements run on PostgreSQL', () => {
  let server: TestServer
  let client: pg.Client
  let customer = ''
  let order = ''

  beforeAll(async () => {
    server = await startTestServer()
    const token = await server.token()
    const created = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Ada', Country: 'DE' } })
    expect(created.status, created.text).toBe(200)
    customer = created.body.Guid
    const product = await call(`${server.api}/Products`, { method: 'POST', token, body: { Code: 'C1', Name: 'Gear', Price: 60 } })
    expect(product.status, product.text).toBe(200)
    const line = (quantity: number) => ({ 'Product@odata.bind': `Products(${product.body.Guid})`, Quantity: quantity })
    const placed = await call(`${server.api}/Orders`, { method: 'POST', token, body: { Number: 1, 'Customer@odata.bind': `Customers(${customer})`, Lines: [line(1), line(2), line(3)] } })
    expect(placed.status, placed.text).toBe(200)
    order = placed.body.Guid
    client = new pg.Client({ connectionString: databaseUrl(testDatabaseUrl(), server.server.config.Tenants.get(server.tenants[0])!.Database) })
    await client.connect()
  })
  afterAll(async () => {
    await client?.end()
    await server?.stop()
  })

  /** Runs a case's statement with the created entities' keys in the path. */
  async function run(url: string): Promise<Record<string, unknown>[]> {
    const compiled = compile(url.replace(`Customers(${K})`, `Customers(${customer})`).replace(`Orders(${K})`, `Orders(${order})`))
    return (await client.query(compiled.sql, compiled.params as unknown[])).rows
  }

  it.each(CASES.map(([url]) => [url]))('%s', async (url) => {
    const rows = await run(url)
    for (const row of rows) if (row.body !== null && row.body !== undefined) expect(() => JSON.parse(String(row.body))).not.toThrow()
    if (url.includes('/$count')) expect(rows).toEqual([{ body: '1' }])
  })

  it('answers with what the plan decided: the expand page, its count, the key read', async () => {
    const [first] = await run('Orders?$top=1&$expand=Lines($select=Quantity;$filter=Quantity ge 2;$top=3;$count=true)')
    const body = JSON.parse(String(first.body))
    expect(body['Lines@odata.count']).toBe(2)
    expect(body.Lines.map((l: { Quantity: number }) => l.Quantity).sort()).toEqual([2, 3])
    const [counted] = await run("Orders?$filter=Customer/Country eq 'DE'&$orderby=OrderDate desc&$top=10&$skip=20&$count=true")
    // The page is empty (skip 20 of 1): the count still comes, alone.
    expect(counted).toMatchObject({ count: '1', body: null })
    const [byKey] = await run(`Orders(${K})/Customer?$select=Name`)
    expect(JSON.parse(String(byKey.body))).toMatchObject({ Guid: customer, Name: 'Ada' })
  })
})
