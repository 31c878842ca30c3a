// `entityctl serve` as a real process: configuration from the environment (lower camel case
// for the whole public model), and a clean shutdown on SIGTERM that lets an in-flight
// request finish.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { serveProcess } from '../support/serve-process.ts'
let setup: TestServer

beforeAll(async () => {
  setup = await startTestServer()
})
afterAll(async () => setup?.stop())

async function signIn(api: string): Promise<string> {
  const response = await call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: setup.tenants[0], Username: ADMIN.username, Password: ADMIN.password } })
  return response.body.accessToken
}

describe('entityctl serve', () => {
  it('takes configuration from the environment: lower camel case everywhere', async () => {
    const served = await serveProcess(setup.configPath, { ApiOptions__EnableLowerCamelCase: 'true' })
    try {
      const api = `${served.url}/api`
      const token = await signIn(api)
      const created = await call(`${api}/Customers?$select=name,country,title`, { method: 'POST', token, body: { name: 'Camel', country: 'ch' } })
      expect(created.status).toBe(200)
      expect(created.body).toMatchObject({ guid: expect.any(String), name: 'Camel', country: 'CH', title: 'Camel' })
      const pascal = await call(`${api}/Customers?$select=Name`, { token })
      expect(pascal.status).toBe(400)
      expect(pascal.body.error.message).toContain("did you mean 'name'")
      const metadata = await call(`${api}/$metadata`, { token })
      expect(metadata.text).toContain('<Property Name="name"')
    } finally {
      await served.stop()
    }
  })

  it('stops cleanly on SIGTERM, finishing the request in flight', async () => {
    const served = await serveProcess(setup.configPath)
    const api = `${served.url}/api`
    const token = await signIn(api)
    const inFlight = call(`${api}/Customers?$select=Name&$expand=Orders($expand=Lines)`, { token })
    await new Promise((resolve) => setTimeout(resolve, 5))
    served.process.kill('SIGTERM')
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await served.exited).toBe(0)
    expect(served.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['SIGTERM received, shutting down', 'shutting down: finishing in-flight requests', 'stopped']))
    // The signal is said in the log, as JSON like every other line (serveProcess parses each), not as plain text beside it.
    expect(served.lines).toContainEqual(expect.objectContaining({ level: 30, signal: 'SIGTERM', msg: 'SIGTERM received, shutting down' }))
    expect(served.stderr()).toBe('')
    // Request lines are batched (http/log-lines.ts): the stop writes the last ones out.
    expect(served.lines).toContainEqual(expect.objectContaining({ msg: 'request', method: 'GET', status: 200, requestId: expect.any(String) }))
    await expect(fetch(`${api}/`)).rejects.toThrow()
  })

  it('refuses to start on a bad configuration value, naming the key', async () => {
    await expect(serveProcess(setup.configPath, { ApiOptions__MaxTop: 'lots' })).rejects.toThrow('ApiOptions:MaxTop: must be an integer, not "lots"')
  })
})
