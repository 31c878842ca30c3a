// The SAP Cloud SDK's generated client against a real server (#17): the client is generated
// from the server's $metadata by @sap-cloud-sdk/generator (transpiled to JavaScript), then
// used as an application would, authenticated by a destination carrying a Bearer token.

import { createRequire } from 'node:module'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { startTestServer, type TestServer } from '../support/test-server.ts'
import { clientWorkspace, type ClientWorkspace } from './client-workspace.ts'

const require = createRequire(import.meta.url)
const GENERATOR = require.resolve('@sap-cloud-sdk/generator/dist/cli.js')
// The one the generated client requires (CommonJS), so its decimals are of the class the client knows.
const { BigNumber } = require('bignumber.js')
const { or } = require('@sap-cloud-sdk/odata-v4')

let server: TestServer
let workspace: ClientWorkspace | undefined
/** The generated service: `entityctl()` gives one API per entity set (`customersApi`, `ordersApi`, …). */
let service: any
/** Where the SDK sends requests: the server's origin; the generated client adds the service path. */
let destination: { url: string; headers: Record<string, string> }

beforeAll(async () => {
  server = await startTestServer()
  const token = await server.token()
  destination = { url: server.url, headers: { Authorization: `Bearer ${token}` } }
  workspace = await clientWorkspace(server, token)
  // $metadata cannot say where the service lives (the SDK reads that from a V2 service's
  // links only): the service path is given per service, as the SDK documents.
  await writeFile(join(workspace.dir, 'options-per-service.json'), JSON.stringify({ 'metadata.xml': { directoryName: 'entityctl', basePath: '/api' } }))
  // The SDK's default tsconfig resolves modules as Node 10 did, without package "exports",
  // which its own runtime packages need: compile as Node 16 does.
  await writeFile(
    join(workspace.dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'es2022', module: 'node16', moduleResolution: 'node16', strict: true, skipLibCheck: true } }),
  )
  await workspace.run(GENERATOR, ['-i', 'metadata.xml', '-o', 'out', '-s', 'options-per-service.json', '--transpile', '--tsconfig', 'tsconfig.json'])
  service = workspace.load('out/entityctl/index.js').entityctl()
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await workspace?.remove()
}, 120_000)

/** The HTTP status under an SDK error (ErrorWithCause → … → the HTTP client's error). */
function statusOf(error: any): number | undefined {
  return error?.rootCause?.response?.status
}

async function createCustomer(name: string): Promise<any> {
  const { customersApi } = service
  return customersApi.requestBuilder().create(customersApi.entityBuilder().name(name).build()).execute(destination)
}

describe('the SAP Cloud SDK client generated from $metadata', () => {
  it('creates an order as a child of its customer (POST Customers(k)/Orders)', async () => {
    const { customersApi, ordersApi } = service
    const customer = await createCustomer('Ada Lovelace')
    const order = ordersApi.entityBuilder().number(1701).build()
    const created = await ordersApi.requestBuilder().create(order).asChildOf(customer, customersApi.schema.ORDERS).execute(destination)
    expect(created.guid).toMatch(/^[0-9a-f-]{36}$/)

    const read = await ordersApi.requestBuilder().getByKey(created.guid).select(ordersApi.schema.NUMBER, ordersApi.schema.CUSTOMER_GUID).execute(destination)
    expect({ number: read.number, customerGuid: read.customerGuid }).toEqual({ number: 1701, customerGuid: customer.guid })
    const withOrders = await customersApi.requestBuilder().getByKey(customer.guid).expand(customersApi.schema.ORDERS.select(ordersApi.schema.NUMBER)).execute(destination)
    expect(withOrders.orders.map((o: any) => o.number)).toEqual([1701])
    // The SDK's select() takes a navigation too: `$select=Name,Orders`, its link, no data.
    const selected = await customersApi.requestBuilder().getByKey(customer.guid).select(customersApi.schema.NAME, customersApi.schema.ORDERS).execute(destination)
    expect(selected.name).toBe('Ada Lovelace')
  })

  it('counts with count(), which asks /$count for application/json and reads the text/plain answer', async () => {
    const { customersApi } = service
    await createCustomer('Counted Once')
    expect(await customersApi.requestBuilder().getAll().filter(customersApi.schema.NAME.equals('Counted Once')).count().execute(destination)).toBe(1)
  })

  it('surfaces 404 for a child of a customer that does not exist', async () => {
    const { customersApi, ordersApi } = service
    const ghost = customersApi.entityBuilder().guid('00000000-0000-4000-8000-000000000000').name('Nobody').build()
    const error = await ordersApi.requestBuilder().create(ordersApi.entityBuilder().number(1702).build()).asChildOf(ghost, customersApi.schema.ORDERS).execute(destination).catch((e: unknown) => e)
    expect(statusOf(error)).toBe(404)
    const orders = await ordersApi.requestBuilder().getAll().filter(ordersApi.schema.NUMBER.equals(1702)).execute(destination)
    expect(orders).toEqual([])
  })

  it('creates, reads by key, updates (If-Match) and deletes a customer', async () => {
    const { customersApi } = service
    const { schema } = customersApi
    const created = await customersApi.requestBuilder().create(customersApi.entityBuilder().name('Grace Hopper').country(' us ').creditLimit(new BigNumber('1234.50')).build()).execute(destination)
    expect(created.versionIdentifier).toMatch(etagAt(1))

    const read = await customersApi.requestBuilder().getByKey(created.guid).select(schema.NAME, schema.COUNTRY, schema.CREDIT_LIMIT, schema.TITLE).execute(destination)
    // The rules ran: Country corrected, Title computed; the decimal came back exact.
    expect({ name: read.name, country: read.country, title: read.title, creditLimit: read.creditLimit.toFixed(2) }).toEqual({
      name: 'Grace Hopper',
      country: 'US',
      title: 'Grace Hopper',
      creditLimit: '1234.50',
    })

    read.name = 'Grace Brewster Hopper'
    const updated = await customersApi.requestBuilder().update(read).execute(destination)
    expect(updated.versionIdentifier).toMatch(etagAt(2))
    // The SDK sends only what changed, with the ETag it holds; one it holds from before is refused.
    updated.city = 'Arlington'
    const stale = await customersApi.requestBuilder().update(updated).setVersionIdentifier(created.versionIdentifier).execute(destination).catch((e: unknown) => e)
    expect(statusOf(stale)).toBe(412)
    const reread = await customersApi.requestBuilder().getByKey(created.guid).select(schema.NAME, schema.TITLE).execute(destination)
    expect({ name: reread.name, title: reread.title }).toEqual({ name: 'Grace Brewster Hopper', title: 'Grace Brewster Hopper' })

    await customersApi.requestBuilder().delete(reread).execute(destination)
    const gone = await customersApi.requestBuilder().getByKey(created.guid).execute(destination).catch((e: unknown) => e)
    expect(statusOf(gone)).toBe(404)
  })

  it('sends a batch: a change set of creates and a read (multipart/mixed)', async () => {
    const { customersApi } = service
    const { schema } = customersApi
    const { batch, changeset } = workspace!.load('out/entityctl/index.js')
    const create = (name: string) => customersApi.requestBuilder().create(customersApi.entityBuilder().name(name).build())
    const both = or(schema.NAME.equals('Batch One'), schema.NAME.equals('Batch Two'))
    const [changeSet, read] = await batch(changeset(create('Batch One'), create('Batch Two')), customersApi.requestBuilder().getAll().select(schema.NAME).filter(both)).execute(destination)
    expect(changeSet.responses.map((r: any) => r.httpCode)).toEqual([200, 200])
    expect(read.isReadResponse()).toBe(true)
    // The SDK logs 'Could not parse constructor from response body' per answer: it looks for
    // V2's `__metadata.uri` to learn each answer's type, which V4 JSON has not; as() names it.
    expect(read.as(customersApi).map((c: any) => c.name).sort()).toEqual(['Batch One', 'Batch Two'])
  })
})
