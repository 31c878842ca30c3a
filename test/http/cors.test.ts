// CORS (ApiOptions:Cors) against real servers: a preflight is answered without credentials,
// answers to an allowed origin (errors too) name it and expose the OData headers, another
// origin gets no CORS header, and without configuration no answer carries one.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

const APP = 'https://app.example.com'
let server: TestServer
let plain: TestServer
let token: string

beforeAll(async () => {
  ;[server, plain] = await Promise.all([
    startTestServer({ config: { ApiOptions: { Cors: { AllowedOrigins: `${APP}, https://other.example.com`, AllowCredentials: true, MaxAgeSeconds: 120 } } } }),
    startTestServer(),
  ])
  token = await server.token()
})
afterAll(async () => {
  await server?.stop()
  await plain?.stop()
})

const preflight = (base: string, origin: string, method = 'PATCH') =>
  call(`${base}/Customers(4f1b1c2e-3a9e-46a7-86b7-ad07b2cd48e8)`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization,content-type,if-match,prefer' },
  })

describe('with allowed origins', () => {
  it('answers a preflight 204 without credentials, naming the origin, methods, headers and max age', async () => {
    const answer = await preflight(server.api, APP)
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP)
    expect(answer.headers.get('access-control-allow-credentials')).toBe('true')
    expect(answer.headers.get('access-control-allow-methods')).toContain('PATCH')
    const allowed = answer.headers.get('access-control-allow-headers')!.toLowerCase()
    for (const header of ['authorization', 'content-type', 'if-match', 'prefer', 'odata-version', 'x-csrf-token']) expect(allowed).toContain(header)
    expect(answer.headers.get('access-control-max-age')).toBe('120')
    expect(answer.headers.get('vary')).toContain('Origin')
  })

  it("allows the headers a client library adds of its own (OpenUI5's), and no malformed name", async () => {
    const answer = await call(`${server.api}/$batch`, {
      method: 'OPTIONS',
      headers: { Origin: APP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,sap-cancel-on-close,x-sap-security-session,bad(name)' },
    })
    expect(answer.status).toBe(204)
    const allowed = answer.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/)
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'sap-cancel-on-close', 'x-sap-security-session', 'odata-version', 'x-csrf-token']))
    expect(allowed).not.toContain('bad(name)')
    expect(allowed.filter((name) => name === 'authorization')).toHaveLength(1)
    expect(answer.headers.get('vary')).toContain('Access-Control-Request-Headers')
  })

  it('exposes the OData headers on a success, and names the origin on an error too', async () => {
    const created = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Cross' }, headers: { Origin: APP } })
    expect(created.status).toBe(200)
    expect(created.headers.get('access-control-allow-origin')).toBe(APP)
    const exposed = created.headers.get('access-control-expose-headers')!
    for (const header of ['ETag', 'Location', 'OData-EntityId', 'OData-Version', 'Preference-Applied']) expect(exposed).toContain(header)
    const refused = await call(`${server.api}/Customers`, { headers: { Origin: APP } })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP)
  })

  it('gives another origin no CORS header, and its preflight goes on to authentication', async () => {
    const answer = await preflight(server.api, 'https://evil.example.com')
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
    expect(answer.status).toBe(401)
    const read = await call(`${server.api}/Customers`, { token, headers: { Origin: 'https://evil.example.com' } })
    expect(read.status).toBe(200)
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('answers the second listed origin as itself', async () => {
    expect((await preflight(server.api, 'https://other.example.com')).headers.get('access-control-allow-origin')).toBe('https://other.example.com')
  })
})

describe('by default', () => {
  it('answers no CORS header and does not take preflights', async () => {
    const answer = await preflight(plain.api, APP)
    expect(answer.status).toBe(401)
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
    const read = await call(`${plain.api}/Customers`, { token: await plain.token(), headers: { Origin: APP } })
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
    expect(read.headers.get('access-control-expose-headers')).toBeNull()
  })
})
