// GET /api/openapi.json, `entityctl openapi` and the explorer page (/api/explorer), against a
// real server with the demo plugins. The document needs the credentials $metadata needs; the
// page and its assets load without any, from local files. The last describe drives Debian's
// chromium (headless, through playwright-core): an integrator signs in or pastes a token,
// sees the entity sets, executes GET /Customers and reads the data in the response panel.

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'

const CHROMIUM = '/usr/bin/chromium'
const bin = fileURLToPath(new URL('../../bin/entityctl', import.meta.url))
// A sign-in (a password hash, a refused one too) can take seconds on a busy machine; expect.poll's
// default of one second made the status checks fail there.
const STATUS_WAIT = { timeout: 15_000 }

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  const customer = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Explorer Customer GmbH', Country: 'DE' } })
  expect(customer.status, customer.text).toBe(200)
})

afterAll(async () => {
  await server?.stop()
})

function entityctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: { ...process.env, CI: '1' }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

describe('GET /api/openapi.json', () => {
  it('needs credentials, as $metadata does', async () => {
    for (const path of ['openapi.json', '$metadata']) {
      const response = await call(`${server.api}/${path}`)
      expect(response.status, path).toBe(401)
      expect(response.body.error.code).toBe('Unauthorized')
      expect(response.headers.get('WWW-Authenticate')).toMatch(/^Bearer/)
    }
    expect((await call(`${server.api}/openapi.json`, { headers: { Authorization: 'Bearer not-a-token' } })).status).toBe(401)
  })

  it('is the document `entityctl openapi` prints, naming the entity sets', { timeout: 90_000 }, async () => {
    const served = await call(`${server.api}/openapi.json`, { token })
    expect(served.status).toBe(200)
    expect(served.headers.get('Content-Type')).toBe('application/json; charset=utf-8')
    expect(served.body.openapi).toBe('3.1.0')
    expect(Object.keys(served.body.paths)).toEqual(expect.arrayContaining(['/Customers', '/Customers({Guid})', '/auth/signin']))
    const printed = await entityctl('--config', server.configPath, 'openapi')
    expect(printed.code, printed.stderr).toBe(0)
    expect(JSON.parse(printed.stdout)).toEqual(served.body)
  })
})

describe('GET /api/explorer', () => {
  it('serves the page and its assets without credentials, from local files', async () => {
    const page = await call(`${server.api}/explorer`)
    expect(page.status).toBe(200)
    expect(page.headers.get('Content-Type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('Content-Security-Policy')).toContain("script-src 'self'")
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
    expect(sources.length).toBeGreaterThan(3)
    for (const source of sources) expect(source, 'no CDN: every asset is a relative path').toMatch(/^explorer\/[\w.-]+$/)
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', png: 'image/png' }
    for (const source of sources) {
      const asset = await fetch(`${server.api}/${source}`)
      expect(asset.status, source).toBe(200)
      expect(asset.headers.get('Content-Type'), source).toBe(types[source.split('.').pop()!])
      expect(asset.headers.get('Cache-Control')).toBe('public, max-age=86400')
      const etag = asset.headers.get('ETag')!
      await asset.arrayBuffer()
      const again = await fetch(`${server.api}/${source}`, { headers: { 'If-None-Match': etag } })
      expect(again.status, source).toBe(304)
    }
  })

  it('serves no other file', async () => {
    for (const path of ['explorer/index.html', 'explorer/package.json', 'explorer/..%2F..%2Fpackage.json', 'explorer/explorer-routes.ts', 'explorer/__proto__']) {
      const response = await call(`${server.api}/${path}`)
      expect(response.status, path).toBe(404)
      expect(response.body.error.code).toBe('NotFound')
    }
  })
})

const noChromium = !existsSync(CHROMIUM)
if (noChromium) console.warn(`explorer browser test skipped: no ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`)

describe.skipIf(noChromium)(`the explorer in headless Chromium (${CHROMIUM})`, () => {
  let browser: Browser
  /** Requests the pages sent anywhere but this server, and errors their consoles printed. */
  const foreign: string[] = []
  const consoleErrors: string[] = []

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Playwright gives each launch a fresh profile; without the background-networking
      // flags Chromium keeps calling home, which a closed network answers with errors.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  })

  afterAll(async () => {
    await browser?.close()
  })

  async function openExplorer(): Promise<Page> {
    const page = await (await browser.newContext()).newPage()
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) foreign.push(request.url())
    })
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    })
    page.on('pageerror', (error) => consoleErrors.push(error.message))
    await page.goto(`${server.api}/explorer`)
    return page
  }

  /** The entity sets Swagger UI lists, once the document has loaded. */
  async function listedSets(page: Page): Promise<string[]> {
    await page.locator('.opblock-tag[data-tag="Customers"]').waitFor()
    return page.locator('.opblock-tag').evaluateAll((tags) => tags.map((tag) => tag.getAttribute('data-tag') ?? ''))
  }

  /** Opens GET /Customers, asks for Name and Country, executes it: the status and the body in the response panel. */
  async function executeGetCustomers(page: Page): Promise<string> {
    const list = page.locator('.opblock-get').filter({ has: page.locator('.opblock-summary-path[data-path="/Customers"]') })
    await list.locator('.opblock-summary').click()
    // Without $select a read answers the key alone (ApiOptions:DefaultSelect).
    await list.locator('tr[data-param-name="$select"] input').fill('Name,Country')
    await list.locator('button.execute').click()
    const answer = list.locator('.live-responses-table .response .response-col_description .highlight-code')
    await answer.waitFor()
    await answer.scrollIntoViewIfNeeded()
    const status = await list.locator('.live-responses-table .response .response-col_status').first().textContent()
    return `${status?.trim()} ${await answer.textContent()}`
  }

  it('signs in, lists the entity sets, and shows the data a GET on Customers answers', { timeout: 60_000 }, async () => {
    const page = await openExplorer()
    await page.fill('#tenant', server.tenants[0])
    await page.fill('#username', ADMIN.username)
    await page.fill('#password', ADMIN.password)
    await page.click('#signin-button')
    expect(await listedSets(page)).toEqual(expect.arrayContaining(['Customers', 'Orders', 'OrderLines', 'Products', 'Users', 'Roles', 'Sign-in']))
    await expect.poll(() => page.textContent('#status'), STATUS_WAIT).toMatch(/^Signed in/)
    const answer = await executeGetCustomers(page)
    expect(answer).toMatch(/^200 /)
    expect(answer).toContain('Explorer Customer GmbH')
    const screenshot = process.env.EXPLORER_SCREENSHOT
    if (screenshot) await page.screenshot({ path: screenshot })
    await page.context().close()
  })

  it('says when a sign-in or a token is refused, and takes a pasted personal access token', { timeout: 60_000 }, async () => {
    const page = await openExplorer()
    await page.fill('#tenant', server.tenants[0])
    await page.fill('#username', ADMIN.username)
    await page.fill('#password', 'not-the-password')
    await page.click('#signin-button')
    await expect.poll(() => page.textContent('#status'), STATUS_WAIT).toBe('Sign-in failed: unknown tenant, user or password.')
    await page.fill('#token', 'not-a-token')
    await page.click('#token-button')
    await expect.poll(() => page.textContent('#status'), STATUS_WAIT).toMatch(/did not load \(401\)/)
    // A personal access token goes as Basic pat:<secret>.
    const pat = await call(`${server.api}/user/pats`, { method: 'POST', token, body: { name: 'explorer', expirationDays: 1, responsibilityIds: [] } })
    expect(pat.status, pat.text).toBe(200)
    await page.fill('#token', pat.body.secret)
    await page.click('#token-button')
    expect(await listedSets(page)).toContain('Customers')
    const answer = await executeGetCustomers(page)
    expect(answer).toMatch(/^200 /)
    expect(answer).toContain('Explorer Customer GmbH')
    await page.context().close()
    // The refused document fetch is the one error the pages may print.
    expect(consoleErrors.filter((text) => !/401/.test(text))).toEqual([])
    expect(foreign, 'every request stays on this server: no CDN, no validator badge').toEqual([])
  })
})
