// `entityctl serve` starts when one tenant's database cannot be entered (gone, renamed, a
// server down): after a reboot, one tenant's fault must not keep the others out of service.
// That tenant answers 503 naming the cause, /readyz lists it, the log says so at error, and
// once its database is back its next request serves it, without a restart. Only when no
// tenant at all can be checked does the start stop (cli.test.ts: the setting named).

import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadConfig } from '../../server/config/load-config.ts'
import { serveProcess, type ServeProcess } from '../support/serve-process.ts'
import { ADMIN, adminSql, answeredWith, call, startTestServer, type TestServer } from '../support/test-server.ts'

const SLOW = 120_000
let setup: TestServer
let served: ServeProcess | undefined
let down: string
let up: string
let database: string

const signIn = (tenant: string) => call(`${served!.api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: ADMIN.username, Password: ADMIN.password } })

beforeAll(async () => {
  setup = await startTestServer({ tenants: ['down', 'up'] })
  ;[down, up] = setup.tenants
  database = loadConfig(setup.configPath, {}).Tenants.get(down)!.Database
  await setup.server.stop()
}, SLOW)
afterAll(async () => {
  await served?.stop()
  await adminSql(`alter database "${database}_away" rename to "${database}"`).catch(() => {})
  await setup?.stop()
})

it('serves the other tenants when one tenant database is gone, and that one again once it is back', { timeout: SLOW }, async () => {
  await adminSql(`alter database "${database}" rename to "${database}_away"`)

  served = await serveProcess(setup.configPath)
  expect((await signIn(up)).status).toBe(200)
  const refused = await signIn(down)
  expect(refused.status).toBe(503)
  expect(refused.body.error.message).toContain(`Tenant '${down}' is unavailable: its database cannot be reached or entered`)
  expect(refused.body.error.message).toContain(`check Tenants:${down}:Database`)
  const logged = await served.line((entry) => entry.level === 50 && entry.tenant === down)
  expect(logged.msg).toContain(`tenant ${down} unavailable`)
  const ready = await call(`${served.url}/readyz`)
  expect(ready.status).toBe(200)
  expect(ready.body.unavailableTenants).toEqual([down])

  await adminSql(`alter database "${database}_away" rename to "${database}"`)
  const back = await answeredWith(200, () => signIn(down))
  expect(back.status, back.text).toBe(200)
  expect((await call(`${served.url}/readyz`)).body.unavailableTenants).toEqual([])
})
