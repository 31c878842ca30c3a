// A key rotation while a server serves: a server that has the rotation's config (the new key,
// the old one as PreviousEncryptionKey) reads values under either key and writes under the new
// one, before, during and after the re-encryption; `tenant rotate-key` run again on that config
// finishes a rotation that stopped half-way.

import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { propertyCipher } from '../../server/tenancy/property-encryption.ts'
import { startServer, type RunningServer } from '../../server/start.ts'
import { newEncryptionKey } from '../../server/tenancy/tenant-keys.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SLOW = 120_000
let server: TestServer
let rotating: RunningServer | undefined

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)) })
}, SLOW)
afterAll(async () => {
  await rotating?.stop()
  await server?.stop()
})

function entityctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', server.configPath, ...args], { env: { ...process.env, CI: '1' }, timeout: SLOW }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

describe('a key rotation under a running server', { timeout: SLOW }, () => {
  it('keeps every value readable while the rows are re-encrypted, and finishes a rotation that stopped half-way', async () => {
    const tenant = server.tenants[0]
    const token = await server.token()
    const before = await call(`${server.api}/Patients`, { method: 'POST', token, body: { Name: 'Before', Diagnosis: 'under the old key', Visits: 1 } })
    expect(before.status).toBe(200)
    const oldKey = loadConfig(server.configPath, {}).Tenants.get(tenant)!.EncryptionKey

    // The config as rotate-key writes it first; the rotation then stops (as if killed).
    const newKey = newEncryptionKey()
    const file = JSON.parse(readFileSync(server.configPath, 'utf8'))
    file.Tenants[tenant] = { ...file.Tenants[tenant], EncryptionKey: newKey, PreviousEncryptionKey: oldKey }
    writeFileSync(server.configPath, JSON.stringify(file))
    rotating = await startServer({ configPath: server.configPath, port: 0, logger: pino({ level: 'silent' }) })
    const api = `${rotating.url}/api`
    const signIn = await call(`${api}/auth/signin`, { method: 'POST', body: { TenantId: tenant, Username: 'admin', Password: 'admin-password-1' } })
    const rotatingToken = signIn.body.accessToken
    const during = await call(`${api}/Patients`, { method: 'POST', token: rotatingToken, body: { Name: 'During', Diagnosis: 'under the new key', Visits: 2 } })
    expect(during.status).toBe(200)
    const read = async () => (await call(`${api}/Patients?$orderby=Name&$select=Name,Diagnosis`, { token: rotatingToken })).body.value.map((p: { Diagnosis: string }) => p.Diagnosis)
    expect(await read()).toEqual(['under the old key', 'under the new key'])

    const settings = loadConfig(server.configPath, {}).Tenants.get(tenant)!
    const client = new pg.Client({ connectionString: databaseUrl(server.server.config.Database.ConnectionString, settings.Database) })
    await client.connect()
    const stored = async () => (await client.query(`select "Name", "Diagnosis" from "Patient" order by "Name"`)).rows.map((r) => r.Diagnosis as string)
    const [oldValue, newValue] = await stored()
    expect(() => propertyCipher(tenant, newKey).decrypt(oldValue)).toThrow()
    expect(propertyCipher(tenant, newKey).decrypt(newValue)).toBe('under the new key')

    // Run again, rotate-key finishes the rotation with the key the config already has.
    const finished = await entityctl('tenant', 'rotate-key', tenant, '--json')
    expect(finished.code, finished.stderr).toBe(0)
    expect(JSON.parse(finished.stdout)).toMatchObject({ tenant, rows: 2 })
    const after = loadConfig(server.configPath, {}).Tenants.get(tenant)!
    expect([after.EncryptionKey, after.PreviousEncryptionKey]).toEqual([newKey, undefined])
    for (const value of await stored()) expect(() => propertyCipher(tenant, newKey).decrypt(value)).not.toThrow()
    await client.end()
    // The server that had the rotation's config never stopped reading.
    expect(await read()).toEqual(['under the old key', 'under the new key'])
  })
})
