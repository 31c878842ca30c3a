// odata2ts's generated service against a real server (#17): the service is generated from the
// server's $metadata (emitted as JavaScript), then used with odata2ts's fetch client as an
// application would, with a Bearer token. test/odata/metadata/client-generator-odata2ts.test.ts
// checks the generated types offline.

import { createRequire } from 'node:module'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { startTestServer, type TestServer } from '../support/test-server.ts'
import { TYPESCRIPT_5_PRELOAD } from '../support/typescript-5.ts'
import { clientWorkspace, type ClientWorkspace } from './client-workspace.ts'

const require = createRequire(import.meta.url)
const GENERATOR = require.resolve('@odata2ts/odata2ts/lib/run-cli.js')
const { FetchClient } = require('@odata2ts/http-client-fetch')

let server: TestServer
let workspace: ClientWorkspace | undefined
let token: string
/** The generated service class: `new EntityctlService(client, serviceRoot)`. */
let EntityctlService: any
/** The service as an application makes it: the service root as given, a Bearer token on every request. */
let service: any

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  workspace = await clientWorkspace(server, token)
  await writeFile(join(workspace.dir, 'typescript-5.cjs'), TYPESCRIPT_5_PRELOAD)
  // odata2ts compiles with the working directory's tsconfig.json: CommonJS, as the folder is.
  await writeFile(join(workspace.dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'CommonJS', strict: true } }))
  await workspace.run(GENERATOR, ['-s', 'metadata.xml', '-o', 'out', '-m', 'service', '-e', 'js'], { preload: './typescript-5.cjs' })
  EntityctlService = workspace.load('out/EntityctlService.js').EntityctlService
  service = new EntityctlService(new FetchClient({ headers: { Authorization: `Bearer ${token}` } }), server.api)
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await workspace?.remove()
}, 120_000)

/** The status of the error answer the client rejects with (its message is the OData error's). */
async function failure(request: Promise<unknown>): Promise<{ status: number; message: string }> {
  const error: any = await request.then(
    () => undefined,
    (e: unknown) => e,
  )
  return { status: error?.status, message: error?.message }
}

async function createCustomer(name: string): Promise<string> {
  const created = await service.Customers().create({ Name: name })
  return created.data.Guid
}

describe('the odata2ts service generated from $metadata', () => {
  it('creates an order through its customer (Customers(k).Orders().create)', async () => {
    const customer = await createCustomer('Ada Lovelace')
    const created = await service.Customers(customer).Orders().create({ Number: 2001 })
    expect(created.status).toBe(200)
    expect(created.data['@odata.context']).toMatch(/\$metadata#Orders(\(.*\))?\/\$entity$/)

    const order = await service.Orders(created.data.Guid).query((builder: any) => builder.select('Number', 'CustomerGuid'))
    expect({ Number: order.data.Number, CustomerGuid: order.data.CustomerGuid }).toEqual({ Number: 2001, CustomerGuid: customer })
    const children = await service.Customers(customer).Orders().query((builder: any) => builder.select('Number'))
    expect(children.data.value.map((o: any) => o.Number)).toEqual([2001])
  })

  it('is answered 404 for a customer that does not exist, 400 when the body binds another', async () => {
    const ghost = '00000000-0000-4000-8000-000000000000'
    expect(await failure(service.Customers(ghost).Orders().create({ Number: 2002 }))).toMatchObject({ status: 404 })
    const [one, other] = [await createCustomer('One'), await createCustomer('Other')]
    expect(await failure(service.Customers(one).Orders().create({ Number: 2003, CustomerGuid: other }))).toMatchObject({ status: 400 })
    const written = await service.Orders().query((builder: any, q: any) => builder.filter(q.Number.in(2002, 2003)))
    expect(written.data.value).toEqual([])
  })

  it('creates, reads by key, patches (If-Match) and deletes a customer', async () => {
    const created = await service.Customers().create({ Name: 'Grace Hopper', Country: ' us ', CreditLimit: 1234.5 })
    const key = created.data.Guid
    expect(created.headers.etag).toMatch(etagAt(1))

    const read = await service.Customers(key).query((builder: any) => builder.select('Name', 'Country', 'Title', 'CreditLimit'))
    expect(read.data).toMatchObject({ Name: 'Grace Hopper', Country: 'US', Title: 'Grace Hopper', CreditLimit: 1234.5 })

    const patched = await service.Customers(key).patch({ Name: 'Grace Brewster Hopper' }, { headers: { 'If-Match': read.data['@odata.etag'] } })
    expect([patched.status, patched.headers.etag]).toEqual([204, expect.stringMatching(etagAt(2))])
    expect(await failure(service.Customers(key).patch({ City: 'Arlington' }, { headers: { 'If-Match': read.data['@odata.etag'] } }))).toMatchObject({ status: 412 })
    const reread = await service.Customers(key).query((builder: any) => builder.select('Name', 'Title'))
    expect(reread.data).toMatchObject({ Name: 'Grace Brewster Hopper', Title: 'Grace Brewster Hopper' })

    expect((await service.Customers(key).delete()).status).toBe(204)
    expect(await failure(service.Customers(key).query())).toMatchObject({ status: 404 })
  })

  it("calls the plugin's methods through the generated functions and actions", async () => {
    const customer = await createCustomer('Methodical')
    const order = await service.Customers(customer).Orders().create({ Number: 2004, OrderDate: '2026-01-02' })
    const open = await service.Orders().OpenSince({ before: '2026-01-03' })
    expect(open.data.value.map((o: any) => o.Guid)).toContain(order.data.Guid)

    const closed = await service.Orders(order.data.Guid).Close()
    expect([closed.status, closed.headers.etag]).toEqual([204, expect.stringMatching(etagAt(2))])
    const read = await service.Orders(order.data.Guid).query((builder: any) => builder.select('Status', 'OrderDate'))
    expect(read.data).toMatchObject({ Status: 'Closed', OrderDate: '2026-01-02' })
    expect((await service.Customers(customer).Revenue()).data.value).toBe(0)
  })

  it('fetches its CSRF token from the service root as it was given (no trailing slash)', async () => {
    const client = new FetchClient({ headers: { Authorization: `Bearer ${token}` } }, { useCsrfProtection: true, csrfTokenFetchUrl: server.api })
    const guarded = new EntityctlService(client, server.api)
    const created = await guarded.Customers().create({ Name: 'Guarded' })
    expect(created.status).toBe(200)
  })
})
