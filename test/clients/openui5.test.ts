// A real OpenUI5 V4 ODataModel (npm @openui5/sap.ui.core, its sources as UI5 loads them) in
// Debian's headless chromium, against a real server with the demo plugins (issue #17). The
// model runs as an app runs it, in group $auto: it loads $metadata, fetches a CSRF token with
// its first $batch, and sends every data request in a multipart $batch: lists with $filter,
// $search and $count, an $expand, creates (one change set), a refused create, a row added to a
// relative list, edits, deletes, bound actions (one on such a row) and functions. The test
// reads what the model answered, the requests the browser sent, and the data the API has
// afterwards. The page (test/clients/openui5/) comes from the server's own origin, then from
// another origin through CORS (ApiOptions:Cors:AllowedOrigins), and from one the server does
// not allow. Skipped, with a warning, without Chromium.

import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

const CHROMIUM = '/usr/bin/chromium'
const PAGE_DIR = fileURLToPath(new URL('./openui5/', import.meta.url))
const UI5_DIR = join(dirname(createRequire(import.meta.url).resolve('@openui5/sap.ui.core/package.json')), 'src')
/** Where the page and UI5's resources are served, on every origin the test uses. */
const PAGE_PATH = '/ui5-test/'
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.properties': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
  '.css': 'text/css',
}

/** A file of the page (index.html, client.js) or of UI5 (resources/…), or undefined: nothing else is served. */
async function pageFile(pathname: string): Promise<{ body: Buffer; type: string } | undefined> {
  if (!pathname.startsWith(PAGE_PATH)) return undefined
  try {
    const name = decodeURIComponent(pathname.slice(PAGE_PATH.length)) || 'index.html'
    const [root, relative] = name.startsWith('resources/') ? [UI5_DIR, name.slice('resources/'.length)] : [PAGE_DIR, name]
    const path = normalize(join(root, relative))
    if (!path.startsWith(root.endsWith(sep) ? root : root + sep)) return undefined
    return { body: await readFile(path), type: TYPES[extname(path)] ?? 'application/octet-stream' }
  } catch {
    return undefined
  }
}

/** A plain HTTP server for the page on an origin of its own (for the cross-origin cases). */
async function servePage(): Promise<{ origin: string; close(): Promise<void> }> {
  const http: Server = createServer((request, response) => {
    pageFile(new URL(request.url ?? '/', 'http://page').pathname).then((file) => {
      if (!file) response.writeHead(404).end()
      else response.writeHead(200, { 'Content-Type': file.type }).end(file.body)
    })
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const address = http.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => http.close(() => resolve())) }
}

const noChromium = !existsSync(CHROMIUM)
if (noChromium) console.warn(`OpenUI5 client test skipped: no ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`)

describe.skipIf(noChromium)(`an OpenUI5 V4 model in headless Chromium (${CHROMIUM})`, () => {
  let server: TestServer
  let token: string
  let browser: Browser
  let allowedSite: Awaited<ReturnType<typeof servePage>>
  let otherSite: Awaited<ReturnType<typeof servePage>>
  /** Guids of the data made for the test through the API. */
  const made: Record<string, string> = {}

  beforeAll(async () => {
    ;[allowedSite, otherSite] = await Promise.all([servePage(), servePage()])
    server = await startTestServer({ config: { ApiOptions: { Cors: { AllowedOrigins: allowedSite.origin } } } })
    token = await server.token()
    const customers = [
      ['lovelaceBau', 'Ada Lovelace Bau GmbH', 'DE', 'Berlin'],
      ['lovelaceSoftware', 'Lovelace Software AG', 'DE', 'Hamburg'],
      ['lovelaceTrading', 'Lovelace Trading Ltd', 'GB', 'London'],
      ['hopper', 'Grace Hopper AG', 'DE', 'Munich'],
      ['babbage', 'Babbage Engines KG', 'DE', 'Bonn'],
    ]
    for (const [key, Name, Country, City] of customers) {
      const created = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name, Country, City } })
      expect(created.status, created.text).toBe(200)
      made[key] = created.body.Guid
    }
    const tea = await call(`${server.api}/Products`, { method: 'POST', token, body: { Code: 'TEA', Name: 'Earl Grey', Category: 'Tea', Price: 4.5 } })
    expect(tea.status, tea.text).toBe(200)
    made.tea = tea.body.Guid
    for (const [number, quantity] of [
      [1001, 2],
      [1002, 1],
    ]) {
      const body = { Number: number, 'Customer@odata.bind': `Customers(${made.lovelaceBau})`, Lines: [{ Quantity: quantity, 'Product@odata.bind': `Products(${made.tea})` }] }
      const order = await call(`${server.api}/Orders`, { method: 'POST', token, body })
      expect(order.status, order.text).toBe(200)
      made[`order${number}`] = order.body.Guid
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // As test/http/openapi-explorer.test.ts: a fresh profile calls home without these flags.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  })

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await allowedSite?.close()
    await otherSite?.close()
  })

  /** A page, what it sent to the API, and what its console printed. */
  interface OpenedPage {
    readonly page: Page
    readonly context: BrowserContext
    readonly apiRequests: Request[]
    readonly console: string[]
  }

  /**
   * Opens the page at `origin`. The server's own origin has no page of ours: there the browser
   * context answers /ui5-test/ from the files, and only that path (a routed context answers
   * CORS preflights itself, so the cross-origin pages come from real servers instead).
   */
  async function openPage(origin: string): Promise<OpenedPage> {
    const context = await browser.newContext()
    if (origin === server.url) {
      await context.route(`${server.url}${PAGE_PATH}**`, async (route) => {
        const file = await pageFile(new URL(route.request().url()).pathname)
        await (file ? route.fulfill({ status: 200, contentType: file.type, body: file.body }) : route.fulfill({ status: 404 }))
      })
    }
    const page = await context.newPage()
    const opened: OpenedPage = { page, context, apiRequests: [], console: [] }
    page.on('request', (request) => {
      if (request.url().startsWith(server.api)) opened.apiRequests.push(request)
    })
    page.on('console', (message) => opened.console.push(`${message.type()}: ${message.text()}`))
    page.on('pageerror', (error) => opened.console.push(`pageerror: ${error.message}`))
    await page.goto(`${origin}${PAGE_PATH}index.html`)
    return opened
  }

  /** page.evaluate of ui5Client.<name>(...args), failing with the page's console when the model fails. */
  async function client<T>(opened: OpenedPage, name: string, ...args: unknown[]): Promise<T> {
    try {
      return (await opened.page.evaluate(([name, args]) => (globalThis as any).ui5Client[name as string](...(args as unknown[])), [name, args] as const)) as T
    } catch (error) {
      throw new Error(`ui5Client.${name} failed: ${(error as Error).message}\nconsole:\n${opened.console.join('\n')}`)
    }
  }

  it('lists, counts, searches, expands, creates, edits, deletes and calls an action, all through $batch', { timeout: 60_000 }, async () => {
    const opened = await openPage(server.url)
    const sets = await client<string[]>(opened, 'connect', `${server.api}/`, token)
    expect(sets).toEqual(expect.arrayContaining(['Customers', 'Orders', 'OrderLines', 'Products']))
    expect(await client(opened, 'annotation', '/Customers/CreditLimit@com.sap.vocabularies.Common.v1.Label')).toBe('Credit limit')

    const list = await client<{ count: number; customers: any[] }>(opened, 'listCustomers', "Country eq 'DE'", 'Lovelace')
    expect(list.count).toBe(2)
    expect(list.customers.map((customer) => customer.Name)).toEqual(['Ada Lovelace Bau GmbH', 'Lovelace Software AG'])
    // A refused request's answer, in its part, is what the model tells the user.
    await expect(client(opened, 'listCustomers', 'Nickname eq 1', undefined)).rejects.toThrow(/Nickname/)

    const customer = await client<any>(opened, 'openCustomer', made.lovelaceBau)
    expect(customer.Name).toBe('Ada Lovelace Bau GmbH')
    expect(customer.Orders.map((order: any) => [order.Number, order.Status])).toEqual([
      [1001, 'Open'],
      [1002, 'Open'],
    ])

    const [engines, difference] = await client<any[]>(opened, 'createCustomers', [
      { Name: 'Analytical Engines SE', Country: ' de ', City: 'Leipzig', CreditLimit: '1000.50' },
      { Name: 'Difference Engines Ltd', Country: 'GB' },
    ])
    // The model asked with IEEE754Compatible=true: decimals come back as strings.
    expect(engines).toMatchObject({ Name: 'Analytical Engines SE', Country: 'DE', City: 'Leipzig', CreditLimit: '1000.50', Title: 'Analytical Engines SE' })
    expect(difference).toMatchObject({ Name: 'Difference Engines Ltd', Country: 'GB' })
    // A refused create: the error's detail becomes a message on the field, as a form shows it.
    const refused = await client<{ message: string; targets: string[] }[]>(opened, 'createRefused', { Country: 'DE' })
    expect(refused).toContainEqual({ message: 'Name is required', targets: [expect.stringMatching(/^\/Customers\(\$uid=[^)]+\)\/Name$/)] })
    // A change set whose second create is refused: nothing is written, and the message lands on
    // the refused row, read from the one application/http answer of the failed change set.
    const oneRefused = await client<{ outcomes: boolean[]; messages: { message: string; targets: string[] }[]; paths: string[] }>(opened, 'createOneRefused', { Name: 'Babbage Rolled Back' }, { Country: 'FR' })
    expect(oneRefused.outcomes).toEqual([false, false])
    expect(oneRefused.messages).toContainEqual({ message: 'Name is required', targets: [`${oneRefused.paths[1]}/Name`] })
    expect((await call(`${server.api}/Customers/$count?$filter=Name eq 'Babbage Rolled Back'`, { token })).text).toBe('0')
    // A row added to the customer's orders, read back through the navigation (Customers(k)/Orders(m)).
    const added = await client<any>(opened, 'addOrder', made.lovelaceBau, { Number: 1003 })
    expect(added.order).toMatchObject({ Number: 1003, Status: 'Open' })
    expect(added.path).toBe(`/Customers(${made.lovelaceBau})/Orders(${added.order.Guid})`)
    // Two edits: the second goes with the ETag the first one's 204 answered.
    expect(await client<any>(opened, 'editCustomer', engines.Guid, { City: 'Dresden' })).toMatchObject({ City: 'Dresden' })
    expect(await client<any>(opened, 'editCustomer', engines.Guid, { CreditLimit: '2500.75' })).toMatchObject({ CreditLimit: '2500.75' })

    await client(opened, 'listCustomers', "Name eq 'Grace Hopper AG'", undefined)
    await client(opened, 'deleteCustomers', [made.hopper, difference.Guid])

    // A bound action, on an order and on a row of a customer's orders, a bound function, a
    // function and an action bound to the collection.
    // Close answers 204; the model keeps the ETag that answer's part carried.
    expect(await client(opened, 'callOperation', `/Orders(${made.order1001})/entityctl.Close`)).toEqual({ '@odata.etag': expect.stringMatching(etagAt(2)) })
    expect(await client(opened, 'readEntity', `/Orders(${made.order1001})`, 'Number,Status')).toMatchObject({ Number: 1001, Status: 'Closed' })
    await client(opened, 'callRowAction', made.lovelaceBau, made.order1002, 'entityctl.Close')
    expect(await client(opened, 'callOperation', `/Customers(${made.lovelaceBau})/entityctl.Revenue`)).toMatchObject({ value: '13.5' })
    const open = await client<any>(opened, 'callOperation', '/Orders/entityctl.OpenSince', { before: '2999-12-31' })
    expect(open.value.map((order: any) => order.Guid)).toEqual([added.order.Guid])
    expect(await client(opened, 'callOperation', '/Products/entityctl.Reprice', { category: 'Tea', percent: '10' })).toMatchObject({ value: 1 })

    // What the server holds now.
    const stored = await call(`${server.api}/Customers(${engines.Guid})?$select=Name,City,Country,CreditLimit`, { token })
    expect(stored.status, stored.text).toBe(200)
    expect(stored.body).toMatchObject({ Name: 'Analytical Engines SE', City: 'Dresden', Country: 'DE', CreditLimit: 2500.75 })
    for (const gone of [made.hopper, difference.Guid]) expect((await call(`${server.api}/Customers(${gone})`, { token })).status).toBe(404)
    expect((await call(`${server.api}/Orders(${made.order1001})?$select=Status`, { token })).body.Status).toBe('Closed')
    expect((await call(`${server.api}/Orders(${made.order1002})?$select=Status`, { token })).body.Status).toBe('Closed')
    expect((await call(`${server.api}/Products(${made.tea})?$select=Price`, { token })).body.Price).toBe(4.95)
    const ordersOfBau = await call(`${server.api}/Customers(${made.lovelaceBau})/Orders?$select=Number&$orderby=Number`, { token })
    expect(ordersOfBau.body.value.map((order: any) => order.Number)).toEqual([1001, 1002, 1003])

    // Only $metadata was asked for apart; every data request went in a $batch, the first with the
    // CSRF handshake (X-CSRF-Token: Fetch) and the others with the token its answer gave.
    const alone = opened.apiRequests.filter((request) => !(request.method() === 'POST' && request.url() === `${server.api}/$batch`))
    expect(alone.map((request) => `${request.method()} ${request.url().slice(server.api.length)}`)).toEqual(['GET /$metadata'])
    const batches = opened.apiRequests.filter((request) => request.method() === 'POST')
    expect(await batches[0].headerValue('X-CSRF-Token')).toBe('Fetch')
    const csrfToken = (await batches[0].response())!.headers()['x-csrf-token']
    expect(csrfToken).toBeTruthy()
    for (const batch of batches.slice(1)) expect(await batch.headerValue('X-CSRF-Token')).toBe(csrfToken)
    expect(await batches[0].headerValue('Content-Type')).toMatch(/^multipart\/mixed;\s*boundary=batch_/)
    const bodies = batches.map((batch) => batch.postData() ?? '')
    const sent = bodies.flatMap((body) => body.split('\r\n').filter((line) => /^(GET|POST|PATCH|DELETE) \S+ HTTP\/1\.1$/.test(line)))
    const guid = '[0-9a-f-]{36}'
    for (const request of [
      /^GET Customers\?.*\$search=Lovelace&\$count=true/,
      `^GET Customers\\(${made.lovelaceBau}\\)\\?.*\\$expand=Orders`,
      '^POST Customers HTTP',
      `^PATCH Customers\\(${engines.Guid}\\) HTTP`,
      `^DELETE Customers\\(${made.hopper}\\) HTTP`,
      `^POST Orders\\(${made.order1001}\\)/entityctl\\.Close HTTP`,
      `^POST Customers\\(${made.lovelaceBau}\\)/Orders HTTP`,
      `^POST Customers\\(${made.lovelaceBau}\\)/Orders\\(${made.order1002}\\)/entityctl\\.Close HTTP`,
      `^GET Customers\\(${made.lovelaceBau}\\)/Orders\\(${added.order.Guid}\\)\\?`,
    ]) {
      expect(sent, String(request)).toContainEqual(expect.stringMatching(request))
    }
    expect(sent.filter((line) => new RegExp(`^PATCH Customers\\(${guid}\\) `).test(line))).toHaveLength(2)
    // The row's action went with the row's ETag, which the server checked.
    expect(bodies.join('\n')).toMatch(new RegExp(`POST Customers\\(${made.lovelaceBau}\\)/Orders\\(${made.order1002}\\)/entityctl\\.Close HTTP/1\\.1\r\n(?:[\\w-]+:.*\r\n)*If-Match: ?W/"1\\.[0-9a-f]{12}"\r\n`))
    // The two creates went in one change set, and so did the two deletes.
    expect(bodies.filter((body) => /Content-Type: ?multipart\/mixed; ?boundary=changeset/i.test(body) && body.split('POST Customers HTTP').length === 3 && body.includes('Analytical Engines SE'))).toHaveLength(1)
    expect(bodies.filter((body) => body.split('DELETE Customers(').length === 3)).toHaveLength(1)
    await opened.context.close()
  })

  it('speaks OData 4.01 when the model is made for it', { timeout: 60_000 }, async () => {
    const opened = await openPage(server.url)
    expect(await client<string[]>(opened, 'connect', `${server.api}/`, token, '4.01')).toContain('Customers')
    const list = await client<{ count: number; customers: any[] }>(opened, 'listCustomers', "City eq 'Hamburg'", 'Lovelace')
    expect(list).toMatchObject({ count: 1, customers: [{ Name: 'Lovelace Software AG' }] })
    expect(await client<any>(opened, 'editCustomer', made.lovelaceSoftware, { CreditLimit: '99.95' })).toMatchObject({ CreditLimit: '99.95' })
    expect((await call(`${server.api}/Customers(${made.lovelaceSoftware})?$select=CreditLimit`, { token })).body.CreditLimit).toBe(99.95)
    const batches = opened.apiRequests.filter((request) => request.method() === 'POST')
    expect(batches).toHaveLength(2)
    for (const batch of batches) {
      expect(await batch.headerValue('OData-MaxVersion')).toBe('4.01')
      // The model refuses an answer of another version: its parts name 4.01 too.
      expect((await batch.response())!.headers()['odata-version']).toBe('4.01')
      expect(await (await batch.response())!.text()).toMatch(/\r\nOData-Version: 4\.01\r\n/)
    }
    await opened.context.close()
  })

  it('calls the service from another origin that ApiOptions:Cors:AllowedOrigins names', { timeout: 60_000 }, async () => {
    const opened = await openPage(allowedSite.origin)
    expect(await client<string[]>(opened, 'connect', `${server.api}/`, token)).toContain('Customers')
    const list = await client<{ count: number; customers: any[] }>(opened, 'listCustomers', "Country eq 'GB'", 'Lovelace')
    expect(list).toMatchObject({ count: 1, customers: [{ Name: 'Lovelace Trading Ltd', City: 'London' }] })
    expect(await client<any>(opened, 'editCustomer', made.lovelaceTrading, { City: 'Manchester' })).toMatchObject({ City: 'Manchester' })
    expect((await call(`${server.api}/Customers(${made.lovelaceTrading})?$select=City`, { token })).body.City).toBe('Manchester')
    // The page read the CSRF token off the first batch's answer (an exposed header) and sent it on.
    const batches = opened.apiRequests.filter((request) => request.method() === 'POST')
    expect(batches).toHaveLength(2)
    expect(await batches[1].headerValue('X-CSRF-Token')).toBe((await batches[0].response())!.headers()['x-csrf-token'])
    await opened.context.close()
  })

  it('cannot call it from an origin the server does not allow', { timeout: 60_000 }, async () => {
    const opened = await openPage(otherSite.origin)
    await expect(client(opened, 'connect', `${server.api}/`, token)).rejects.toThrow(/ui5Client\.connect failed/)
    expect(opened.console.join('\n')).toMatch(/CORS policy/)
    await opened.context.close()
  })
})
