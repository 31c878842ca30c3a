// `entityctl serve` as a real process: configuration from the environment (lower camel case
// for the whole public model), a clean shutdown on SIGTERM that lets an in-flight
// request finish, and a second SIGTERM that does not wait for it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer as createNetServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { readConfigFile, writeConfigFile } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { ADMIN, call, startTestServer, testDatabaseUrl, type TestServer } from '../support/test-server.ts'
import { serveProcess } from '../support/serve-process.ts'
const root = fileURLToPath(new URL('../..', import.meta.url))
let setup: TestServer

beforeAll(async () => {
  setup = await startTestServer()
})
afterAll(async () => setup?.stop())

/**
 * Until a session waits for a lock on the database of `url` (the server's read, behind the
 * locker). Asked on a connection of its own: in the locker's transaction, pg_stat_activity is
 * read once and kept, and a first look before the read arrived would be the only one.
 */
async function waitForLockWaiter(url: string): Promise<void> {
  const watcher = new pg.Client({ connectionString: url })
  await watcher.connect()
  try {
    for (;;) {
      const { rows } = await watcher.query("select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")
      if (rows[0].waiting > 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  } finally {
    await watcher.end()
  }
}

async function signIn(api: string): Promise<string> {
  const response = await call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: setup.tenants[0], Username: ADMIN.username, Password: ADMIN.password } })
  return response.body.accessToken
}

/** A server on a copy of the config in a folder of its own, which only it watches. */
async function serveCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'entityctl-serve-'))
  const configPath = join(dir, 'entityctl.json')
  copyFileSync(setup.configPath, configPath)
  return { dir, configPath, served: await serveProcess(configPath) }
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
    // The read waits on a lock held here, so it is surely in flight when the signal comes, and
    // still running once the server has said it is finishing: then the lock goes.
    const tenantUrl = databaseUrl(testDatabaseUrl(), setup.server.config.Tenants.get(setup.tenants[0])!.Database)
    const locker = new pg.Client({ connectionString: tenantUrl })
    await locker.connect()
    let response: Awaited<ReturnType<typeof call>>
    try {
      await locker.query('begin')
      await locker.query('lock table "Customer" in access exclusive mode')
      const inFlight = call(`${api}/Customers?$select=Name&$expand=Orders($expand=Lines)`, { token })
      await waitForLockWaiter(tenantUrl)
      served.process.kill('SIGTERM')
      await served.line((entry) => entry.msg === 'shutting down: finishing in-flight requests')
      await locker.query('commit')
      response = await inFlight
    } finally {
      await locker.end()
    }
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

  it('stops at once on a second SIGTERM while it waits for a request in flight, saying so', async () => {
    // Time enough for the graceful stop to be still waiting when the second signal comes.
    const served = await serveProcess(setup.configPath, { Server__ShutdownTimeoutSeconds: '60' })
    const token = await signIn(served.api)
    const tenantUrl = databaseUrl(testDatabaseUrl(), setup.server.config.Tenants.get(setup.tenants[0])!.Database)
    const locker = new pg.Client({ connectionString: tenantUrl })
    await locker.connect()
    try {
      await locker.query('begin')
      await locker.query('lock table "Customer" in access exclusive mode')
      const inFlight = call(`${served.api}/Customers?$select=Name`, { token }).catch((error: Error) => error)
      await waitForLockWaiter(tenantUrl)
      served.process.kill('SIGTERM')
      await served.line((entry) => entry.msg === 'shutting down: finishing in-flight requests')
      const secondAt = Date.now()
      served.process.kill('SIGTERM')
      const exit = await Promise.race([served.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 5000))])
      expect(exit).toBe(143)
      expect(Date.now() - secondAt).toBeLessThan(5000)
      expect(served.lines).toContainEqual(
        expect.objectContaining({ level: 40, signal: 'SIGTERM', msg: 'SIGTERM received again while shutting down: stopping now, requests in flight are cut' }),
      )
      expect(served.stderr()).toBe('')
      // The request is cut, never answered as if it had finished.
      expect(await inFlight).toBeInstanceOf(Error)
    } finally {
      served.process.kill('SIGKILL')
      await locker.query('rollback').catch(() => undefined)
      await locker.end()
    }
  })

  it('says in the log which edited config keys wait for a restart, once, while it follows the tenants', async () => {
    const { dir, configPath, served } = await serveCopy()
    const tenant = setup.tenants[0]
    const edit = async (change: (file: Record<string, any>) => void, logs: string) => {
      const file = readConfigFile(configPath)
      change(file)
      const from = served.lines.length
      await writeConfigFile(configPath, file)
      await served.line((entry) => entry.msg === 'tenants changed' && JSON.stringify(entry).includes(logs), from)
      return served.lines.slice(from).filter((entry) => entry.level === 40)
    }
    try {
      const from = served.lines.length
      const disabled = await edit((file) => {
        file.ApiOptions = { ...file.ApiOptions, MaxTop: 7 }
        file.Tenants[tenant].Disabled = true
        // A rotation of the signing key is followed at once, not left for a restart.
        file.JWT = { SigningKey: randomBytes(32).toString('base64url'), PreviousSigningKeys: file.JWT.SigningKey }
      }, `"removed":["${tenant}"]`)
      expect(disabled).toEqual([expect.objectContaining({ keys: ['ApiOptions:MaxTop'], msg: 'config keys changed that apply only at the next restart' })])
      expect(served.lines.slice(from)).toContainEqual(
        expect.objectContaining({ level: 30, previousSigningKeys: 1, msg: 'JWT signing keys changed: new access tokens are signed with the new SigningKey' }),
      )
      expect(JSON.stringify(served.lines)).not.toContain(readConfigFile(configPath).JWT.SigningKey)
      // Still waiting for the same restart: not said again.
      expect(await edit((file) => delete file.Tenants[tenant].Disabled, `"added":["${tenant}"]`)).toEqual([])
      const token = await signIn(served.api)
      expect((await call(`${served.api}/Customers?$top=8`, { token })).status).toBe(200)
    } finally {
      await served.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('keeps its tenants while its config file is missing, and follows the file once it is back', async () => {
    const { dir, configPath, served } = await serveCopy()
    const token = await signIn(served.api)
    const content = readFileSync(configPath)
    try {
      const from = served.lines.length
      rmSync(configPath)
      const seen = await served.line((entry) => entry.msg === 'tenants changed' || entry.config === configPath, from)
      expect(seen).toMatchObject({ level: 40, msg: 'config file is missing; tenants unchanged until it is back' })
      expect((await call(`${served.api}/Customers`, { token })).status).toBe(200)
      const file = JSON.parse(content.toString())
      file.Tenants[setup.tenants[0]].Disabled = true
      await writeConfigFile(configPath, file)
      await served.line((entry) => entry.msg === 'tenants changed', from)
      expect((await call(`${served.api}/Customers`, { token })).status).toBe(401)
    } finally {
      await served.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('says when a config file that did not load loads again, so its warning is not the last word', async () => {
    const { dir, configPath, served } = await serveCopy()
    const content = readFileSync(configPath)
    try {
      const from = served.lines.length
      const broken = JSON.parse(content.toString())
      broken.Database = { ...broken.Database, PoolSizePerTenant: 'lots' }
      writeFileSync(configPath, JSON.stringify(broken))
      served.process.kill('SIGHUP')
      expect(await served.line((entry) => entry.config === configPath, from)).toMatchObject({ level: 40, msg: 'config file changed but does not load; tenants unchanged' })
      const warned = served.lines.length
      writeFileSync(configPath, content)
      served.process.kill('SIGHUP')
      expect(await served.line((entry) => entry.config === configPath, warned)).toMatchObject({ level: 30, msg: 'config file loads again' })
      // Once: a reload of a file that loaded before says nothing. Reloads run one at a time, in
      // order, so the warning of one asked after it (the file broken again) marks it done.
      const healed = served.lines.length
      served.process.kill('SIGHUP')
      await served.line((entry) => entry.signal === 'SIGHUP', healed)
      writeFileSync(configPath, JSON.stringify(broken))
      served.process.kill('SIGHUP')
      const brokenAgain = await served.line((entry) => entry.config === configPath, healed)
      expect(brokenAgain).toMatchObject({ level: 40, msg: 'config file changed but does not load; tenants unchanged' })
      // (The file's watch may warn of it a second time, later.)
      const untilWarned = served.lines.indexOf(brokenAgain) + 1
      expect(served.lines.slice(healed, untilWarned).filter((entry) => entry.config === configPath)).toEqual([brokenAgain])
    } finally {
      await served.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reads its config file again on SIGHUP, and keeps serving', async () => {
    const served = await serveProcess(setup.configPath)
    try {
      const from = served.lines.length
      served.process.kill('SIGHUP')
      const heard = await Promise.race([served.line((entry) => entry.signal === 'SIGHUP', from), served.exited.then((code) => ({ exited: code }))])
      expect(heard).toMatchObject({ level: 30, signal: 'SIGHUP', msg: 'SIGHUP received, reading the config file again' })
      expect((await fetch(`${served.url}/healthz`)).status).toBe(200)
    } finally {
      await served.stop()
    }
  })

  it('stops at once on SIGTERM while starting, saying so', async () => {
    // A database server that accepts and never answers holds the start at its connection.
    const sockets: Socket[] = []
    const silent = createNetServer((socket) => sockets.push(socket))
    const port = await new Promise<number>((resolve) => silent.listen(0, '127.0.0.1', () => resolve((silent.address() as { port: number }).port)))
    const child = spawn(join(root, 'bin/entityctl'), ['--config', setup.configPath, 'serve', '--port', '0'], {
      env: { ...process.env, Server__LogLevel: 'info', Database__ConnectionString: `postgres://postgres@127.0.0.1:${port}/postgres` },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    try {
      let stderr = ''
      child.stderr!.on('data', (chunk) => (stderr += chunk))
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      await new Promise((resolve) => silent.once('connection', resolve))
      child.kill('SIGTERM')
      expect(await exited).toBe(143)
      expect(stderr).toContain('entityctl: SIGTERM received while starting; stopped before serving')
    } finally {
      child.kill('SIGKILL')
      for (const socket of sockets) socket.destroy()
      silent.close()
    }
  })

  it('refuses to start on a bad configuration value, naming the key', async () => {
    await expect(serveProcess(setup.configPath, { ApiOptions__MaxTop: 'lots' })).rejects.toThrow('ApiOptions:MaxTop: must be an integer, not "lots"')
  })

  it('refuses metrics on the API port, naming the key, rather than calling its own port in use', async () => {
    const port = String(await new Promise<number>((resolve) => {
      const probe = createNetServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    }))
    await expect(serveProcess(setup.configPath, { Server__MetricsPort: port }, ['--port', port])).rejects.toThrow(`Server:MetricsPort ${port} is the port the API listens on`)
  })
})
