// `entityctl serve` as a real process: configuration from the environment (lower camel case
// for the whole public model), and a clean shutdown on SIGTERM that lets an in-flight
// request finish.

import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
let setup: TestServer

beforeAll(async () => {
  setup = await startTestServer()
})
afterAll(async () => setup?.stop())

interface Served {
  readonly process: ChildProcess
  readonly url: string
  readonly lines: Record<string, unknown>[]
  readonly exited: Promise<number | null>
}

/** Starts bin/entityctl serve on a free port and waits for its "serving" log line. */
function serve(env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(join(root, 'bin/entityctl'), ['--config', setup.configPath, 'serve', '--port', '0'], {
    env: { ...process.env, Server__LogLevel: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: Record<string, unknown>[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    let stderr = ''
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line)
      lines.push(entry)
      if (entry.msg === 'entityctl serving') resolve({ process: child, url: entry.url, lines, exited })
    })
  })
}

async function signIn(api: string): Promise<string> {
  const response = await call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: setup.tenants[0], Username: ADMIN.username, Password: ADMIN.password } })
  return response.body.accessToken
}

describe('entityctl serve', () => {
  it('takes configuration from the environment: lower camel case everywhere', async () => {
    const served = await serve({ ApiOptions__EnableLowerCamelCase: 'true' })
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
      served.process.kill('SIGTERM')
      await served.exited
    }
  })

  it('stops cleanly on SIGTERM, finishing the request in flight', async () => {
    const served = await serve()
    const api = `${served.url}/api`
    const token = await signIn(api)
    const inFlight = call(`${api}/Customers?$select=Name&$expand=Orders($expand=Lines)`, { token })
    await new Promise((resolve) => setTimeout(resolve, 5))
    served.process.kill('SIGTERM')
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await served.exited).toBe(0)
    expect(served.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down: finishing in-flight requests', 'stopped']))
    await expect(fetch(`${api}/`)).rejects.toThrow()
  })

  it('refuses to start on a bad configuration value, naming the key', async () => {
    await expect(serve({ ApiOptions__MaxTop: 'lots' })).rejects.toThrow('ApiOptions:MaxTop: must be an integer, not "lots"')
  })
})
