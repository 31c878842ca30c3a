// Plugin methods whose parameters and results are not plain scalars in a JSON body: entity-typed
// parameters as $metadata declares them (OData JSON 18), and dates a method returns as JS Dates.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./method-plugins', import.meta.url)) })
  token = await server.token()
})
afterAll(async () => server?.stop())

describe('results that are JS Dates', () => {
  it('answers an Edm.DateTimeOffset result as its literal', async () => {
    const response = await call(`${server.api}/Crates/Moment()`, { token })
    expect(response.status).toBe(200)
    expect(response.body.value).toBe('2024-03-01T12:00:00.000Z')
  })

  it('answers an Edm.Date result as YYYY-MM-DD', async () => {
    const response = await call(`${server.api}/Crates/Day()`, { token })
    expect(response.status).toBe(200)
    expect(response.body.value).toBe('2024-03-01')
  })
})
