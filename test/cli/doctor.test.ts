// Configuration that fails loudly, and `entityctl doctor`, run as the real binary against the
// test PostgreSQL: `config check` lists every problem at once; doctor names each failing check
// (a port in use, a tenant database that does not exist, a wrong EncryptionKey, a plugin that
// does not load) with what to do, and exits 1; a healthy installation exits 0.

import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_PLUGINS, TEST_DATABASE_URL } from '../support/test-server.ts'
import { dropDatabase } from '../../server/tenancy/database-server.ts'
import { loadConfig, readConfigFile } from '../../server/config/load-config.ts'
import { serveProcess } from '../support/serve-process.ts'
import { freePort } from '../support/free-port.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'entityctl-doctor-'))
const SLOW = 120_000
const tenant = `doc-${randomBytes(3).toString('hex')}`
const database = `entityctl_${tenant.replaceAll('-', '_')}`
const key = () => randomBytes(32).toString('base64')
let busy: Server

function entityctl(config: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json(): any }> {
  return entityctlWith({}, config, ...args)
}

function entityctlWith(env: Record<string, string>, config: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json(): any }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', config, ...args], { env: { ...process.env, CI: '1', ...env }, timeout: SLOW }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json: () => JSON.parse(stdout) }),
    )
  })
}

function writeConfig(name: string, content: Record<string, any>): string {
  const path = join(dir, name)
  writeFileSync(
    path,
    JSON.stringify({
      ...content,
      Server: { LogLevel: 'silent', PluginsDir: DEMO_PLUGINS, Port: 0, ...content.Server },
      Database: { ConnectionString: TEST_DATABASE_URL },
      JWT: { SigningKey: randomBytes(32).toString('base64url') },
    }),
  )
  return path
}

const healthy = join(dir, 'healthy.json')

beforeAll(async () => {
  writeConfig('healthy.json', {})
  const added = await entityctl(healthy, 'tenant', 'add', tenant, '--json')
  expect(added.code, added.stderr).toBe(0)
  // Another program on a port: it hangs up on whoever connects (doctor asks it for /healthz).
  busy = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
}, SLOW)

afterAll(async () => {
  await new Promise((resolve) => busy?.close(resolve))
  await dropDatabase(TEST_DATABASE_URL, database)
  rmSync(dir, { recursive: true, force: true })
})

describe('config check', { timeout: SLOW }, () => {
  it('lists every problem at once, exit 2, as JSON too', async () => {
    const config = join(dir, 'bad.json')
    writeFileSync(
      config,
      JSON.stringify({
        Server: { Port: 'eighty', Bogus: 1 },
        Databse: {},
        Database: { ConnectionString: 'garbage' },
        JWT: { SigningKey: 'abc' },
        Tenants: { 'Not Valid': {}, acme: { EncryptionKey: 'short' } },
      }),
    )
    const [human, json] = await Promise.all([entityctl(config, 'config', 'check'), entityctl(config, 'config', 'check', '--json')])
    expect(human.code).toBe(2)
    expect(human.stderr).toContain(`${config}: 7 problems:`)
    const error = json.json().error
    expect(json.code).toBe(2)
    expect(error.code).toBe('ConfigError')
    // What serve refuses too: a signing key shorter than 32 bytes, a connection string that is no URL.
    expect(error.problems).toEqual([
      expect.stringContaining('Configuration Databse: unknown section'),
      expect.stringContaining('Configuration Server:Bogus: unknown key'),
      'Configuration Server:Port: must be an integer, not "eighty"',
      'Configuration Database:ConnectionString: must be a PostgreSQL connection string: postgres://user:password@host:5432/database',
      'Configuration JWT:SigningKey: must be at least 32 bytes, base64url encoded, not 2',
      expect.stringContaining('Configuration Tenants:Not Valid: a tenant name is'),
      'Configuration Tenants:acme:EncryptionKey: must be 32 bytes, base64 encoded',
    ])
    for (const problem of error.problems) expect(human.stderr).toContain(problem)
  })

  it('refuses what serve refuses: no signing key fails config check and doctor; a malformed connection string names its setting', async () => {
    const config = join(dir, 'unsigned.json')
    writeFileSync(config, JSON.stringify({ Server: { LogLevel: 'silent', PluginsDir: DEMO_PLUGINS, Port: 0 }, Database: { ConnectionString: TEST_DATABASE_URL } }))
    const garbage = join(dir, 'garbage.json')
    writeFileSync(garbage, JSON.stringify({ Database: { ConnectionString: 'garbage' }, JWT: { SigningKey: randomBytes(32).toString('base64url') } }))
    const [check, doctor, serve, users] = await Promise.all([
      entityctl(config, 'config', 'check', '--json'),
      entityctl(config, 'doctor', '--json'),
      entityctl(config, 'serve', '--port', '0', '--json'),
      entityctl(garbage, 'user', 'list', '--tenant', 'acme', '--json'),
    ])
    const missingKey = `Configuration JWT:SigningKey: is required to serve: at least 32 random bytes, base64url encoded; make one with node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))" (install.sh writes one into the config it creates)`
    expect([check.code, check.json().error.problems]).toEqual([2, [missingKey]])
    expect([serve.code, serve.json().error]).toEqual([2, { code: 'ConfigError', message: missingKey }])
    expect([doctor.code, doctor.json().healthy]).toEqual([1, false])
    expect(doctor.json().checks).toContainEqual(expect.objectContaining({ check: 'config', status: 'fail', detail: missingKey }))
    expect([users.code, users.json().error.code]).toEqual([2, 'ConfigError'])
    expect(users.json().error.message).toContain('Database:ConnectionString: must be a PostgreSQL connection string')
  })

  it('checks the previous signing keys as serve does: a short one fails config check and doctor, naming it', async () => {
    const config = join(dir, 'previous-keys.json')
    const previous = `${randomBytes(32).toString('base64url')},${randomBytes(8).toString('base64url')}`
    writeFileSync(config, JSON.stringify({ Server: { LogLevel: 'silent', PluginsDir: DEMO_PLUGINS, Port: 0 }, Database: { ConnectionString: TEST_DATABASE_URL }, JWT: { SigningKey: randomBytes(32).toString('base64url'), PreviousSigningKeys: previous } }))
    const [check, doctor] = await Promise.all([entityctl(config, 'config', 'check', '--json'), entityctl(config, 'doctor', '--json')])
    const problem = 'Configuration JWT:PreviousSigningKeys: key 2 of 2 must be at least 32 bytes, base64url encoded, not 8'
    expect([check.code, check.json().error.problems]).toEqual([2, [problem]])
    expect([doctor.code, doctor.json().healthy]).toEqual([1, false])
    expect(doctor.json().checks).toContainEqual(expect.objectContaining({ check: 'config', status: 'fail', detail: problem }))
    // Never the keys themselves.
    expect(check.stdout + doctor.stdout).not.toContain(previous.split(',')[1])
  })

  it('refuses what only serve read before: a proxy list, a cron schedule, timeouts out of order (exit 2, every one named)', async () => {
    const config = writeConfig('serve-reads.json', { Server: { TrustedProxies: 'proxy.local', HeadersTimeoutSeconds: 30, RequestTimeoutSeconds: 10 }, Housekeeping: { Schedule: 'hourly' } })
    const [check, serve] = await Promise.all([entityctl(config, 'config', 'check', '--json'), entityctl(config, 'serve', '--port', '0', '--json')])
    const problems = [
      'Configuration Server:HeadersTimeoutSeconds: must not exceed Server:RequestTimeoutSeconds (10)',
      'Configuration Server:TrustedProxies: "proxy.local" is not an IP address or CIDR range (e.g. 10.0.0.0/8, ::1)',
      "Configuration Housekeeping:Schedule: 'hourly' is not a valid cron expression (e.g. '17 * * * *': minute 17 of every hour)",
    ]
    expect([check.code, check.json().error.problems]).toEqual([2, problems])
    expect([serve.code, serve.json().error.code]).toEqual([2, 'ConfigError'])
    for (const problem of problems) expect(serve.json().error.message).toContain(problem)
  })

  it('refuses a file that cannot be read, naming it (exit 2)', async () => {
    const missing = join(dir, 'nowhere.json')
    const result = await entityctl(missing, 'doctor', '--json')
    expect([result.code, result.json().error.code]).toEqual([2, 'ConfigError'])
    expect(result.json().error.message).toContain(`Config file ${missing} does not exist`)
  })
})

describe('doctor', { timeout: SLOW }, () => {
  it('finds nothing wrong with a healthy installation (exit 0)', async () => {
    const result = await entityctl(healthy, 'doctor', '--json')
    expect(result.code, result.stdout + result.stderr).toBe(0)
    const report = result.json()
    expect(report.healthy).toBe(true)
    expect(report.checks.map((c: { check: string; status: string }) => [c.check, c.status])).toEqual([
      ['node', 'ok'],
      ['config', 'ok'],
      ['plugins', 'ok'],
      ['port', 'ok'],
      ['database', 'ok'],
      [`tenant ${tenant}`, 'ok'],
    ])
  })

  it('names each failure with what to do about it, and exits 1', async () => {
    const port = (busy.address() as { port: number }).port
    const good = loadConfig(healthy, {}).Tenants.get(tenant)!
    const config = writeConfig('sick.json', {
      Server: { Port: port },
      Tenants: {
        [tenant]: { Database: database, EncryptionKey: good.EncryptionKey },
        'wrong-key': { Database: database, EncryptionKey: key() },
        missing: { Database: `${database}_missing`, EncryptionKey: key() },
      },
    })
    const [json, human] = await Promise.all([entityctl(config, 'doctor', '--json'), entityctl(config, 'doctor')])
    expect(json.code).toBe(1)
    const checks = Object.fromEntries(json.json().checks.map((c: { check: string }) => [c.check, c]))
    expect(json.json().healthy).toBe(false)
    expect(checks.port).toMatchObject({ status: 'fail', detail: `127.0.0.1:${port} is in use by another program`, fix: expect.stringContaining('Server:Port') })
    expect(checks[`tenant ${tenant}`].status).toBe('ok')
    expect(checks['tenant wrong-key']).toMatchObject({ status: 'fail', detail: expect.stringContaining('EncryptionKey does not open the data'), fix: expect.stringContaining('Tenants:wrong-key:EncryptionKey') })
    expect(checks['tenant missing']).toMatchObject({ status: 'fail', detail: expect.stringContaining('does not exist'), fix: expect.stringContaining('Tenants:missing:Database') })
    expect(human.code).toBe(1)
    expect(human.stdout).toContain('3 checks failed.')
    expect(human.stdout).toContain('FAIL tenant wrong-key: Put back the key')
  })

  it('checks the port serve would use: $PORT, which overrides Server:Port', async () => {
    const port = (busy.address() as { port: number }).port
    const result = await entityctlWith({ PORT: String(port) }, healthy, 'doctor', '--json')
    expect(result.code, result.stdout + result.stderr).toBe(1)
    const checks = Object.fromEntries(result.json().checks.map((c: { check: string }) => [c.check, c]))
    expect(checks.port).toMatchObject({ status: 'fail', detail: `127.0.0.1:${port} is in use by another program`, fix: expect.stringContaining('PORT (it overrides Server:Port)') })
  })

  it('warns of a tenant whose schema is not the one the plugins make, naming the command that shows the change', async () => {
    const plugins = join(dir, 'changed-plugins')
    cpSync(DEMO_PLUGINS, plugins, { recursive: true })
    writeFileSync(join(plugins, 'notes.ts'), `import { entity, p, plugin } from 'entityctl/plugin'\nexport default plugin({ entities: [entity('Note', { properties: { Text: p.text() } })] })\n`)
    const config = writeConfig('changed.json', { Server: { PluginsDir: plugins }, Tenants: readConfigFile(healthy).Tenants })
    const result = await entityctl(config, 'doctor', '--json')
    expect(result.code, result.stdout + result.stderr).toBe(0)
    const checks = Object.fromEntries(result.json().checks.map((c: { check: string }) => [c.check, c]))
    expect(checks[`tenant ${tenant}`]).toMatchObject({
      status: 'warn',
      detail: 'reachable, EncryptionKey opens the canary; its schema is not the one the plugins make',
      fix: expect.stringContaining(`entityctl migrate --plan --tenant ${tenant}`),
    })
    // A change that loses data is not made by a start: the fix must not promise it is.
    expect(checks[`tenant ${tenant}`].fix).toContain(`entityctl migrate --allow-data-loss --tenant ${tenant}`)
  })

  it('knows a running server by its metrics port too: a warning, not a port in use by another program', async () => {
    const metricsPort = await freePort()
    const config = writeConfig('serving.json', { Server: { MetricsPort: metricsPort } })
    const served = await serveProcess(config)
    try {
      const result = await entityctl(config, 'doctor', '--json')
      expect(result.code, result.stdout + result.stderr).toBe(0)
      const checks = Object.fromEntries(result.json().checks.map((c: { check: string }) => [c.check, c]))
      expect(checks['metrics port']).toEqual({
        check: 'metrics port',
        status: 'warn',
        detail: `127.0.0.1:${metricsPort}: an entityctl server is serving there`,
        fix: 'A second `entityctl serve` needs another Server:MetricsPort.',
      })
    } finally {
      await served.stop()
    }
  })

  it('reports a plugin that does not load, with its position', async () => {
    const config = writeConfig('plugins.json', { Server: { PluginsDir: fileURLToPath(new URL('./fixtures/broken-plugins/misspelt', import.meta.url)) } })
    const result = await entityctl(config, 'doctor', '--json')
    expect(result.code).toBe(1)
    const plugins = result.json().checks.find((c: { check: string }) => c.check === 'plugins')
    expect(plugins).toMatchObject({ status: 'fail', detail: expect.stringMatching(/library\.ts:7:24: .*did you mean required\?/) })
  })

  it('reports a plugin that loads but whose $metadata serve would refuse at its start', async () => {
    const config = writeConfig('reserved.json', { Server: { PluginsDir: fileURLToPath(new URL('./fixtures/broken-plugins/reserved', import.meta.url)) } })
    const result = await entityctl(config, 'doctor', '--json')
    expect(result.code).toBe(1)
    const plugins = result.json().checks.find((c: { check: string }) => c.check === 'plugins')
    expect(plugins).toMatchObject({ status: 'fail', detail: expect.stringMatching(/shop\.ts:9:\d+: .*'bindingParameter' is reserved/) })
  })

  it('reports an entity set the fixed routes would shadow', async () => {
    const config = writeConfig('shadowed.json', { Server: { PluginsDir: fileURLToPath(new URL('./fixtures/broken-plugins/shadowed', import.meta.url)) } })
    const result = await entityctl(config, 'doctor', '--json')
    expect(result.code).toBe(1)
    const plugins = result.json().checks.find((c: { check: string }) => c.check === 'plugins')
    expect(plugins).toMatchObject({ status: 'fail', detail: expect.stringMatching(/steps\.ts:7:5: Workflow: the alias 'Workflow' \(the entity's name\) is reserved: \/api\/workflow is a fixed route/) })
  })
})
