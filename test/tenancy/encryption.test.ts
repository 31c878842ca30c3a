// Encrypted properties (issue 5): ciphertext in the database, plain values through the API,
// never usable in $filter or $orderby, and a wrong key stops the start instead of reading garbage.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { loadConfig } from '../../server/config/load-config.ts'
import { databaseUrl } from '../../server/tenancy/database-server.ts'
import { startServer } from '../../server/start.ts'
import pino from 'pino'

const pluginsDir = fileURLToPath(new URL('./plugins', import.meta.url))
let server: TestServer
let token: string
let database: pg.Client

beforeAll(async () => {
  server = await startTestServer({ pluginsDir })
  token = await server.token()
  const config = loadConfig(server.configPath, {})
  database = new pg.Client({ connectionString: databaseUrl(config.Database.ConnectionString, config.Tenants.get(server.tenants[0])!.Database) })
  await database.connect()
})
afterAll(async () => {
  await database?.end()
  await server?.stop()
})

describe('encrypted properties', () => {
  it('are stored as ciphertext and read back as plain values', async () => {
    const created = await call(`${server.api}/Patients?$select=Name,Diagnosis,BirthDate,Visits,Summary`, {
      method: 'POST',
      token,
      body: { Name: 'Jane Roe', Diagnosis: 'Sprained ankle', BirthDate: '1990-05-17', Visits: 3 },
    })
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ Name: 'Jane Roe', Diagnosis: 'Sprained ankle', BirthDate: '1990-05-17', Visits: 3, Summary: 'Jane Roe: Sprained ankle' })
    const { rows } = await database.query('select "Diagnosis", "BirthDate", "Visits" from "Patient" where "Guid" = $1', [created.body.Guid])
    for (const value of Object.values(rows[0])) {
      expect(value).toMatch(/^enc1:/)
      expect(String(value)).not.toContain('Sprained')
    }
    const list = await call(`${server.api}/Patients?$select=Diagnosis`, { token })
    expect(list.body.value).toEqual([expect.objectContaining({ Diagnosis: 'Sprained ankle' })])
  })

  it('keep their rules: the length is checked on the plain value', async () => {
    const response = await call(`${server.api}/Patients`, { method: 'POST', token, body: { Name: 'Long', Diagnosis: 'x'.repeat(201) } })
    expect(response.status).toBe(400)
    expect(response.body.error.details[0].target).toBe('Diagnosis')
  })

  it('update without garbling the other encrypted values', async () => {
    const created = await call(`${server.api}/Patients`, { method: 'POST', token, body: { Name: 'Pat', Diagnosis: 'Flu', Visits: 1 } })
    const updated = await call(`${server.api}/Patients(${created.body.Guid})?$select=Diagnosis,Visits`, { method: 'PATCH', token, body: { Visits: 2 } })
    expect(updated.body).toMatchObject({ Diagnosis: 'Flu', Visits: 2 })
  })

  it('never repeat a refused value in the error, which the log writes too', async () => {
    for (const body of [{ Visits: 'visits 1980-03-12' }, { BirthDate: '12/03/1980' }, { Diagnosis: ['asthma'] }]) {
      const refused = await call(`${server.api}/Patients`, { method: 'POST', token, body: { Name: 'Jane Roe', ...body } })
      expect(refused.status).toBe(400)
      const [[property, value]] = Object.entries(body)
      expect(refused.body.error.details[0]).toMatchObject({ target: property, message: expect.stringMatching(new RegExp(`^${property} expects .*, not an? \\w+ \\(.*encrypted`)) })
      expect(JSON.stringify(refused.body)).not.toContain(JSON.stringify(value).slice(1, -1).replace(/^"|"$/g, ''))
    }
  })

  it('cannot be filtered or sorted on', async () => {
    for (const query of ["$filter=Diagnosis eq 'Flu'", '$orderby=Visits', '$apply=groupby((Diagnosis))']) {
      const response = await call(`${server.api}/Patients?${query}`, { token })
      expect(response.status, query).toBe(400)
      expect(response.body.error.message, query).toContain('stored encrypted')
    }
  })
})

describe('a wrong EncryptionKey', () => {
  it('stops the start with a clear message', async () => {
    const file = JSON.parse(readFileSync(server.configPath, 'utf8'))
    const copy = server.configPath.replace(/\.json$/, '.wrong.json')
    file.Tenants[server.tenants[0]].EncryptionKey = randomBytes(32).toString('base64')
    writeFileSync(copy, JSON.stringify(file))
    await expect(startServer({ configPath: copy, port: 0, logger: pino({ level: 'silent' }) })).rejects.toThrow(/EncryptionKey is not the key this tenant's data was encrypted with/)
  })
})
