// `entityctl serve --watch` as a real process on a plugins folder of the test's own: a changed
// plugin is served after the reload ($metadata shows its new property), and one that does not
// load is logged with its position while the plugins loaded before keep serving.

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { call, DEMO_PLUGINS, startTestServer, type TestServer } from '../support/test-server.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'

const plugins = mkdtempSync(join(tmpdir(), 'entityctl-watch-'))
const sales = join(plugins, 'sales.ts')
let setup: TestServer
let served: ServeProcess | undefined

beforeAll(async () => {
  cpSync(DEMO_PLUGINS, plugins, { recursive: true })
  setup = await startTestServer({ pluginsDir: plugins })
})
afterAll(async () => {
  await served?.stop()
  await setup?.stop()
  rmSync(plugins, { recursive: true, force: true })
})

it('serves on an IPv6 address, with --watch too: its URL is written with brackets', { timeout: 90_000 }, async () => {
  // It used to be http://::1:<port>, which is no URL: --watch read its port from it and ended with 'Invalid URL'.
  const ipv6 = await serveProcess(setup.configPath, {}, ['--watch', '--host', '::1'])
  try {
    expect(ipv6.url).toMatch(/^http:\/\/\[::1\]:\d+$/)
    await ipv6.line((entry) => entry.msg === 'watching the plugins folder')
    expect((await call(`${ipv6.url}/healthz`)).status).toBe(200)
  } finally {
    await ipv6.stop()
  }
})

it('reloads a changed plugin, and keeps the old one serving when the new one does not load', { timeout: 90_000 }, async () => {
  served = await serveProcess(setup.configPath, {}, ['--watch'])
  await served.line((entry) => entry.msg === 'watching the plugins folder')
  const token = await setup.token()
  const metadata = async () => (await call(`${served!.api}/$metadata`, { token })).text
  expect(await metadata()).not.toContain('Name="Region"')

  const original = readFileSync(sales, 'utf8')
  const city = 'City: p.text().maxLength(60).searchable(),'
  expect(original).toContain(city)
  let seen = served.lines.length
  writeFileSync(sales, original.replace(city, `${city}\n    Region: p.text().maxLength(40),`))
  await served.line((entry) => entry.msg === 'entityctl serving', seen)
  expect(await metadata()).toContain('<Property Name="Region" Type="Edm.String" MaxLength="40"')

  seen = served.lines.length
  writeFileSync(sales, `${readFileSync(sales, 'utf8')}\nconst broken = ;\n`)
  const refused = await served.line((entry) => String(entry.msg).startsWith('plugins not reloaded'), seen)
  expect(String(refused.error)).toMatch(/sales\.ts:\d+:\d+/)
  expect(await metadata()).toContain('<Property Name="Region"')
  expect(served.stderr()).toBe('')
})
