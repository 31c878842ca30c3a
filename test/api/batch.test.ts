// $batch over real HTTP (issue #17): the JSON form (4.01) and multipart/mixed (4.0, as SAPUI5
// sends it), atomicity groups and change sets that commit all or nothing (proved by a hash of
// every row of every entity table), Content-ID references in URLs and bodies, dependsOn,
// If-Match per part, the MaxBatchRequests cap, per-part authorization, and a batch as one
// request of a workflow.

import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantPool } from '../auth/helpers.ts'
import { etagAt } from '../support/entity-tags.ts'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'
import { tablesHash as tableHashOf } from '../support/table-hash.ts'

const CLERK = { username: 'clerk', password: 'clerk-password-1', fullAccess: false }
const TABLES = ['Customer', 'Product', 'Order', 'OrderLine', 'Tally', 'Shelf']

let server: TestServer
let pool: pg.Pool
let admin: string
let clerk: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./plugins', import.meta.url)), users: [ADMIN, CLERK], config: { ApiOptions: { MaxBatchRequests: 50 } } })
  pool = tenantPool(server)
  admin = await server.token()
  clerk = await server.token(undefined, CLERK.username, CLERK.password)
})
afterAll(async () => {
  await pool?.end()
  await server?.stop()
})

/** Every row of every entity table, as one hash. */
const tablesHash = () => tableHashOf(pool, TABLES)

const jsonBatch = (requests: unknown[], token = admin, headers: Record<string, string> = {}) =>
  call(`${server.api}/$batch`, { method: 'POST', token, body: { requests }, headers })

async function customerNamed(name: string): Promise<number> {
  const { rows } = await pool.query('select count(*)::int as n from "Customer" where "Name" = $1', [name])
  return rows[0].n
}

interface MultipartAnswer {
  readonly status: number
  readonly contentId?: string
  readonly headers: Record<string, string>
  readonly body: any
  readonly changeSet?: number
}

/** A multipart batch answer read the way a client reads it: nested change sets flattened, marked by their position. */
function readMultipart(text: string, contentType: string): MultipartAnswer[] {
  const boundary = /boundary=([^;\s]+)/.exec(contentType)![1]
  const answers: MultipartAnswer[] = []
  const split = (body: string, b: string) => body.split(`--${b}`).slice(1, -1)
  let changeSet = 0
  const readHttp = (part: string, set?: number) => {
    const [mime, http] = splitOnce(part, '\r\n\r\n')
    const [head, body] = splitOnce(http, '\r\n\r\n')
    const [statusLine, ...headerLines] = head.split('\r\n')
    const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
    expect(mime).toMatch(/Content-Type: application\/http\r\nContent-Transfer-Encoding: binary/)
    const contentId = /Content-ID: (\S+)/.exec(mime)?.[1]
    answers.push({ status: Number(statusLine.split(' ')[1]), contentId, headers, body: body.trim() ? JSON.parse(body) : undefined, changeSet: set })
  }
  for (const part of split(text, boundary)) {
    const nested = /Content-Type: multipart\/mixed; boundary=(\S+)/.exec(part)
    if (nested) {
      changeSet++
      for (const member of split(part, nested[1])) readHttp(member.replace(/^\r\n/, ''), changeSet)
    } else {
      readHttp(part.replace(/^\r\n/, ''))
    }
  }
  return answers
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator)
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + separator.length)]
}

/** A multipart batch as SAPUI5 writes one: relative URLs, change sets with Content-IDs, CRLF. */
function multipart(parts: ({ method: string; url: string; body?: unknown; headers?: Record<string, string> } | { changeSet: { method: string; url: string; body?: unknown; id: string; headers?: Record<string, string> }[]; boundary?: string })[]): { body: string; type: string } {
  const boundary = 'batch_id-1700000000000-42'
  const request = (p: { method: string; url: string; body?: unknown; headers?: Record<string, string> }, id?: string) => {
    const head = ['Content-Type:application/http', 'Content-Transfer-Encoding:binary', ...(id ? [`Content-ID:${id}`] : []), '', `${p.method} ${p.url} HTTP/1.1`, 'Accept:application/json;odata.metadata=minimal;IEEE754Compatible=true']
    for (const [name, value] of Object.entries(p.headers ?? {})) head.push(`${name}:${value}`)
    if (p.body !== undefined) head.push('Content-Type:application/json;charset=UTF-8;IEEE754Compatible=true')
    return `${head.join('\r\n')}\r\n\r\n${p.body !== undefined ? JSON.stringify(p.body) : ''}\r\n`
  }
  const out: string[] = []
  parts.forEach((part, index) => {
    if ('changeSet' in part) {
      const set = part.boundary ?? `changeset_id-1700000000000-${index}`
      out.push(`--${boundary}\r\nContent-Type: multipart/mixed;boundary="${set}"\r\n\r\n`)
      for (const member of part.changeSet) out.push(`--${set}\r\n${request(member, member.id)}`)
      out.push(`--${set}--\r\n`)
    } else {
      out.push(`--${boundary}\r\n${request(part)}`)
    }
  })
  out.push(`--${boundary}--\r\n`)
  return { body: out.join(''), type: `multipart/mixed;boundary=${boundary}` }
}

async function sendMultipart(batch: { body: string; type: string }, token = admin, headers: Record<string, string> = {}, query = '') {
  const response = await fetch(`${server.api}/$batch${query}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': batch.type, 'OData-Version': '4.0', ...headers },
    body: batch.body,
  })
  const text = await response.text()
  return { status: response.status, type: response.headers.get('content-type') ?? '', text }
}

describe('control information in 4.01 bodies, without the odata. prefix (JSON 4.01 §4.5)', () => {
  const post = (path: string, body: unknown) => call(`${server.api}/${path}`, { method: 'POST', token: admin, body, headers: { 'OData-Version': '4.01' } })

  it('binds with Navigation@bind as with Navigation@odata.bind, a required reference and an optional one alike', async () => {
    const customer = await post('Customers', { Name: 'Unprefixed Bind' })
    expect(customer.status, customer.text).toBe(200)
    const order = await post('Orders?$select=CustomerGuid', { '@type': '#entityctl.Order', Number: 93001, 'Customer@bind': `Customers(${customer.body.Guid})` })
    expect([order.status, order.body.CustomerGuid], order.text).toEqual([200, customer.body.Guid])
    // An optional reference: a bind left unread would be lost without a word.
    const shelf = await post('Shelfs', { Name: 'Unprefixed' })
    expect(shelf.status, shelf.text).toBe(200)
    const tally = await post('Tallies?$select=ShelfGuid', { Count: 1, 'Shelf@bind': `Shelfs(${shelf.body.Guid})` })
    expect([tally.status, tally.body.ShelfGuid], tally.text).toEqual([200, shelf.body.Guid])
    const wrongType = await post('Tallies', { '@type': '#entityctl.Shelf', Count: 1 })
    expect([wrongType.status, wrongType.body.error?.details?.[0]?.target], wrongType.text).toEqual([400, '@type'])
  })

  it('binds Navigation@bind to an entity an earlier request of the batch created', async () => {
    const answer = await jsonBatch([
      { id: 's', method: 'POST', url: 'Shelfs', body: { Name: 'Unprefixed In Batch' } },
      { id: 't', method: 'POST', url: 'Tallies?$select=ShelfGuid', body: { Count: 1, 'Shelf@bind': '$s' }, dependsOn: ['s'] },
    ], admin, { 'OData-Version': '4.01' })
    expect(answer.status, answer.text).toBe(200)
    const [shelf, tally] = answer.body.responses
    expect([shelf.status, tally.status, tally.body.ShelfGuid], answer.text).toEqual([200, 200, shelf.body.Guid])
  })
})

describe('JSON $batch (4.01)', () => {
  it('runs reads and writes in order, with $<id> references in URLs and bodies and dependsOn', async () => {
    const answer = await jsonBatch([
      { id: 'c', method: 'POST', url: 'Customers?$select=Name', body: { Name: 'Batch One' }, atomicityGroup: 'g' },
      { id: 'o', method: 'POST', url: '/api/Orders?$select=Number', body: { Number: 7001, 'Customer@odata.bind': '$c' }, atomicityGroup: 'g' },
      { id: 'r', method: 'GET', url: '$c?$select=Name&$expand=Orders($select=Number)', dependsOn: ['g'] },
      { id: 'x', method: 'GET', url: `${server.api}/Customers/$count`, dependsOn: ['c'] },
    ])
    expect(answer.status, answer.text).toBe(200)
    const [c, o, r, x] = answer.body.responses
    expect(c).toMatchObject({ id: 'c', atomicityGroup: 'g', status: 200, body: { Name: 'Batch One' } })
    expect(c.headers.location).toMatch(/\/api\/Customers\([0-9a-f-]{36}\)$/)
    expect(c.headers.etag).toMatch(etagAt(1))
    expect(o).toMatchObject({ id: 'o', status: 200, body: { Number: 7001 } })
    expect(r).toMatchObject({ id: 'r', status: 200, body: { Name: 'Batch One', Orders: [{ Number: 7001 }] } })
    expect(x.status).toBe(200)
    expect(await customerNamed('Batch One')).toBe(1)
  })

  it('binds an entity reference to an earlier request, {"@odata.id": "$<id>"}, as the request alone binds one', async () => {
    const answer = await jsonBatch([
      { id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Referenced By Id' } },
      { id: 'o', method: 'POST', url: 'Orders?$select=Number&$expand=Customer($select=Name)', body: { Number: 7401, Customer: { '@odata.id': '$c' } } },
    ])
    expect(answer.body.responses[1], answer.text).toMatchObject({ status: 200, body: { Number: 7401, Customer: { Name: 'Referenced By Id' } } })
    expect(await customerNamed('Referenced By Id')).toBe(1)
    const customer = answer.body.responses[0].body.Guid
    const alone = await call(`${server.api}/Orders?$select=Number&$expand=Customer($select=Name)`, {
      method: 'POST',
      token: admin,
      body: { Number: 7402, Customer: { '@odata.id': `Customers(${customer})` } },
    })
    expect(alone.body, alone.text).toMatchObject({ Number: 7402, Customer: { Guid: customer, Name: 'Referenced By Id' } })
    // A collection's members too: the orders bound to a new customer.
    const both = await call(`${server.api}/Customers?$select=Name&$expand=Orders($select=Number;$orderby=Number)`, {
      method: 'POST',
      token: admin,
      body: { Name: 'Took Two Orders', Orders: [{ '@odata.id': `Orders(${answer.body.responses[1].body.Guid})` }, { '@odata.id': `Orders(${alone.body.Guid})` }] },
    })
    expect(both.body, both.text).toMatchObject({ Name: 'Took Two Orders', Orders: [{ Number: 7401 }, { Number: 7402 }] })
    const wrongSet = await call(`${server.api}/Orders`, { method: 'POST', token: admin, body: { Number: 7403, Customer: { '@odata.id': `Orders(${customer})` } } })
    expect(wrongSet.status).toBe(400)
    expect(wrongSet.body.error.details).toMatchObject([{ target: 'Customer', message: expect.stringContaining('does not address a Customer') }])
  })

  it('writes nothing of an atomicity group one of whose requests fails, answers each of its requests (JSON 19.5), and its dependents 424', async () => {
    const before = await tablesHash()
    const answer = await jsonBatch([
      { id: '1', method: 'POST', url: 'Customers', body: { Name: 'Never Saved' }, atomicityGroup: 'g' },
      { id: '2', method: 'POST', url: 'Orders', body: { Number: 7002, 'Customer@odata.bind': '$1' }, atomicityGroup: 'g' },
      { id: '3', method: 'POST', url: 'Customers', body: { Name: 'Never Saved', CreditLimit: 'lots' }, atomicityGroup: 'g' },
      { id: '4', method: 'GET', url: 'Customers?$top=1', dependsOn: ['g'] },
      { id: '5', method: 'GET', url: 'Customers?$top=1' },
    ], admin, { Prefer: 'odata.continue-on-error' })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('preference-applied')).toBe('odata.continue-on-error')
    const statuses = answer.body.responses.map((r: any) => [r.id, r.atomicityGroup, r.status])
    // Every request of the group is answered and failed: the one that failed with its error, the
    // others (rolled back, or never run) 424, none with the Location or ETag of a write undone.
    expect(statuses).toEqual([['1', 'g', 424], ['2', 'g', 424], ['3', 'g', 400], ['4', undefined, 424], ['5', undefined, 200]])
    const [first, second, failed] = answer.body.responses
    expect(failed.body.error.code).toBe('ValidationFailed')
    for (const undone of [first, second]) {
      expect(undone.body.error).toEqual({ code: 'FailedDependency', message: `Request '${undone.id}' of atomicity group 'g' was not applied: request '3' of the group failed, and a group's requests succeed or fail together.` })
      expect(undone.headers).toEqual({ 'odata-version': '4.0', 'content-type': 'application/json' })
    }
    expect(await tablesHash()).toBe(before)
  })

  it('does not run a request with an "if" condition it cannot evaluate: 424, and nothing of its group is written', async () => {
    const created = await jsonBatch([{ id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Kept If' } }])
    const key = created.body.responses[0].body.Guid
    const before = await tablesHash()
    const answer = await jsonBatch([
      { id: 'd', method: 'DELETE', url: `Customers(${key})`, if: 'false' },
      { id: 'n', method: 'POST', url: 'Customers', body: { Name: 'Never If' }, atomicityGroup: 'g' },
      { id: 'p', method: 'PATCH', url: `Customers(${key})`, body: { City: 'Nowhere' }, atomicityGroup: 'g', if: `$n/$succeeded` , dependsOn: ['n'] },
      { id: 'r', method: 'GET', url: `Customers(${key})?$select=Name` },
    ])
    expect(answer.status, answer.text).toBe(200)
    // JSON 19.1: a service that does not evaluate "if" fails every request of its group with 424, nothing applied.
    expect(answer.body.responses.map((r: any) => [r.id, r.status])).toEqual([['d', 424], ['n', 424], ['p', 424], ['r', 200]])
    expect(answer.body.responses[0].body.error).toMatchObject({ code: 'FailedDependency', message: expect.stringContaining('"if"') })
    expect(answer.body.responses[1].body.error.message).toContain("request 'p' of the group failed")
    expect(answer.body.responses[3].body.Name).toBe('Kept If')
    expect(await tablesHash()).toBe(before)
    expect((await jsonBatch([{ id: 'x', method: 'GET', url: 'Customers', if: true }])).status).toBe(400)
  })

  it('applies continue-on-error as 4.0 and 4.01 name it, and says it applied only when it did', async () => {
    const requests = [{ id: '1', method: 'GET', url: 'Nowhere' }, { id: '2', method: 'GET', url: 'Customers/$count' }]
    const applied = async (prefer: string) => (await jsonBatch(requests, admin, { Prefer: prefer })).headers.get('preference-applied')
    expect(await applied('odata.continue-on-error')).toBe('odata.continue-on-error')
    expect(await applied('continue-on-error')).toBe('continue-on-error')
    expect(await applied('return=minimal, continue-on-error=true')).toBe('continue-on-error')
    // false asks to stop at the first error; the batch goes on regardless, so it is not applied.
    expect(await applied('odata.continue-on-error=false')).toBeNull()
  })

  it('names the OData-Version of the request alone on every answer, failed ones too', async () => {
    const answer = await jsonBatch(
      [
        { id: 'ok', method: 'GET', url: 'Customers?$top=1' },
        { id: 'missing', method: 'GET', url: 'Customers(00000000-0000-4000-8000-000000000000)' },
        { id: 'after', method: 'GET', url: 'Customers?$top=1', dependsOn: ['missing'] },
        { id: 'invalid', method: 'POST', url: 'Customers', body: { Nope: 'no such property' } },
      ],
      admin,
      { 'OData-MaxVersion': '4.01' },
    )
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.responses.map((r: { status: number; headers: Record<string, string> }) => [r.status, r.headers['odata-version']])).toEqual([
      [200, '4.01'],
      [404, '4.01'],
      [424, '4.01'],
      [400, '4.01'],
    ])
  })

  it('refuses a request whose protocol headers it would refuse alone: OData-Version, OData-MaxVersion, Isolation, a body that is not JSON', async () => {
    const before = await tablesHash()
    const answer = await jsonBatch([
      { id: 'v5', method: 'GET', url: 'Customers?$top=1', headers: { 'OData-Version': '5.0' } },
      { id: 'max3', method: 'GET', url: 'Customers?$top=1', headers: { 'odata-maxversion': '3.0' } },
      { id: 'word', method: 'GET', url: 'Customers?$top=1', headers: { 'OData-Version': 'four' } },
      { id: 'text', method: 'POST', url: 'Customers', headers: { 'Content-Type': 'text/plain' }, body: 'Name=Plain Text' },
      { id: 'ok', method: 'GET', url: 'Customers?$top=1', headers: { 'OData-Version': '4.01', 'OData-MaxVersion': '4.01' } },
      { id: 'snapshot', method: 'POST', url: 'Customers', headers: { Isolation: 'snapshot' }, body: { Name: 'Snapshot Isolated' } },
    ])
    expect(answer.status, answer.text).toBe(200)
    const alone = await call(`${server.api}/Customers?$top=1`, { token: admin, headers: { 'OData-Version': '5.0' } })
    const [v5, max3, word, text, ok] = answer.body.responses
    expect(v5).toMatchObject({ status: 400, body: alone.body })
    expect(max3).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('OData-MaxVersion 3.0 is below 4.0') } } })
    expect(word.status).toBe(400)
    expect(text).toMatchObject({ status: 415, body: { error: { code: 'UnsupportedMediaType' } } })
    expect(ok.status).toBe(200)
    expect(answer.body.responses[5]).toMatchObject({ status: 412, body: { error: { code: 'PreconditionFailed' } } })
    expect(await tablesHash()).toBe(before)
  })

  it('answers each body as the request alone, digit for digit: a decimal of more than 15 digits is not rounded', async () => {
    expect((await call(`${server.api}/Customers`, { method: 'POST', token: admin, body: { Name: 'Batch Digits', CreditLimit: 10.5 } })).status).toBe(200)
    const wide = `Customers?$filter=Name eq 'Batch Digits'&$compute=CreditLimit add 1234567890.123456789 as Big&$select=Big`
    const alone = await call(`${server.api}/${wide.replaceAll(' ', '%20')}`, { token: admin })
    expect(alone.text).toContain('"Big":1234567900.623456789')
    const answer = await jsonBatch([{ id: '1', method: 'GET', url: wide }])
    expect(answer.status, answer.text).toBe(200)
    expect(answer.text).toContain('"Big":1234567900.623456789')
    expect(answer.body.responses[0]).toMatchObject({ id: '1', status: 200 })
  })

  it('takes If-Match: $<id> as the ETag that request answered with (OData JSON 19.3)', async () => {
    const created = await jsonBatch([{ id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Etag Ref' } }])
    const key = created.body.responses[0].body.Guid
    const answer = await jsonBatch([
      { id: 'r', method: 'GET', url: `Customers(${key})` },
      { id: 'p', method: 'PATCH', url: `Customers(${key})`, headers: { 'if-match': '$r' }, body: { City: 'First' }, dependsOn: ['r'] },
      { id: 'q', method: 'PATCH', url: `Customers(${key})`, headers: { 'If-Match': '$r' }, body: { City: 'Second' }, dependsOn: ['r'] },
      { id: 's', method: 'PATCH', url: `Customers(${key})`, headers: { 'if-match': '$p' }, body: { City: 'Third' }, dependsOn: ['p'] },
      { id: 'n', method: 'GET', url: 'Customers/$count' },
      { id: 'x', method: 'PATCH', url: `Customers(${key})`, headers: { 'if-match': '$n' }, body: { City: 'Never' } },
    ])
    expect(answer.body.responses.map((r: any) => [r.id, r.status])).toEqual([['r', 200], ['p', 204], ['q', 412], ['s', 204], ['n', 200], ['x', 400]])
    expect(answer.body.responses[5].body.error.message).toContain("'$n' names no ETag")
    expect((await call(`${server.api}/Customers(${key})?$select=City`, { token: admin })).body.City).toBe('Third')
  })

  it('answers a HEAD request with the headers of its GET and no body, as alone', async () => {
    const answer = await jsonBatch([{ id: 'h', method: 'HEAD', url: 'Customers?$top=1' }])
    expect(answer.status, answer.text).toBe(200)
    const [head] = answer.body.responses
    expect(head).toMatchObject({ id: 'h', status: 200, headers: { 'content-type': expect.stringMatching(/^application\/json/) } })
    expect(head).not.toHaveProperty('body')
  })

  it('checks If-Match per request', async () => {
    const created = await call(`${server.api}/Customers`, { method: 'POST', token: admin, body: { Name: 'Etag Part' } })
    const key = created.body.Guid
    const answer = await jsonBatch([
      { id: 'stale', method: 'PATCH', url: `Customers(${key})`, headers: { 'If-Match': 'W/"9"' }, body: { City: 'Oslo' } },
      { id: 'fresh', method: 'PATCH', url: `Customers(${key})`, headers: { 'if-match': created.headers.get('etag')! }, body: { City: 'Bergen' } },
    ])
    expect(answer.body.responses.map((r: any) => r.status)).toEqual([412, 204])
    const read = await call(`${server.api}/Customers(${key})?$select=City`, { token: admin })
    expect(read.body.City).toBe('Bergen')
  })

  it('refuses (412) the ETag of a deleted entity on PATCH, PUT and DELETE of the one created again with its key, in a group or not', async () => {
    const guid = crypto.randomUUID()
    const first = await call(`${server.api}/Customers`, { method: 'POST', token: admin, body: { Guid: guid, Name: 'First in a batch' } })
    const seen = first.headers.get('etag')!
    // Deleted and created again by a batch of its own: the same key at the same version.
    const again = await jsonBatch([
      { id: 'd', method: 'DELETE', url: `Customers(${guid})` },
      { id: 'c', method: 'POST', url: 'Customers', body: { Guid: guid, Name: 'Again in a batch' }, dependsOn: ['d'] },
    ])
    expect(again.body.responses.map((r: any) => r.status)).toEqual([204, 200])
    expect(again.body.responses[1].headers.etag).toMatch(etagAt(1))
    const stale = (method: string, id: string, atomicityGroup?: string) => ({
      id,
      method,
      url: `Customers(${guid})`,
      headers: { 'If-Match': seen },
      ...(method === 'DELETE' ? {} : { body: { Name: 'Lost update' } }),
      ...(atomicityGroup ? { atomicityGroup } : {}),
    })
    const alone = await jsonBatch([stale('PATCH', 'p'), stale('PUT', 'u'), stale('DELETE', 'd')])
    expect(alone.body.responses.map((r: any) => [r.id, r.status, r.body?.error?.code])).toEqual([
      ['p', 412, 'PreconditionFailed'],
      ['u', 412, 'PreconditionFailed'],
      ['d', 412, 'PreconditionFailed'],
    ])
    const before = await tablesHash()
    const grouped = await jsonBatch([{ id: 'n', method: 'PATCH', url: `Customers(${guid})`, body: { City: 'Kept?' }, atomicityGroup: 'g' }, stale('PATCH', 'p', 'g')])
    expect(grouped.body.responses.find((r: any) => r.id === 'p')).toMatchObject({ status: 412, body: { error: { code: 'PreconditionFailed' } } })
    expect(await tablesHash()).toBe(before)
    expect((await call(`${server.api}/Customers(${guid})?$select=Name`, { token: admin })).body.Name).toBe('Again in a batch')
  })

  it('takes an empty object as a body, as the request alone does, in either form and streamed', async () => {
    const key = (await call(`${server.api}/Customers`, { method: 'POST', token: admin, body: { Name: 'Empty Patch' } })).body.Guid
    const json = await jsonBatch([{ id: 'a', method: 'PATCH', url: `Customers(${key})`, body: {} }])
    expect(json.body.responses.map((r: any) => r.status)).toEqual([204])
    const multi = await sendMultipart(multipart([{ changeSet: [{ id: '1', method: 'PATCH', url: `Customers(${key})`, body: {} }] }]))
    const parts = readMultipart(multi.text, multi.type)
    expect(parts.map((p) => p.status)).toEqual([204])
    // The request alone, its body streamed (Transfer-Encoding: chunked, no Content-Length).
    const streamed = await fetch(`${server.api}/Customers(${key})`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: ReadableStream.from([new TextEncoder().encode('{}')]),
      duplex: 'half',
    } as RequestInit)
    expect(streamed.status).toBe(204)
    const bodiless = await call(`${server.api}/Customers(${key})`, { method: 'PATCH', token: admin })
    expect(bodiless.status).toBe(400)
    expect(bodiless.body.error.message).toBe('The request needs a JSON body.')
  })

  it('runs atomicity groups that lose to concurrent writes again, as a write alone: none answers 409', async () => {
    const customer = (await call(`${server.api}/Customers`, { method: 'POST', token: admin, body: { Name: 'Contended' } })).body.Guid
    const product = (await call(`${server.api}/Products`, { method: 'POST', token: admin, body: { Code: 'CONT-1', Name: 'Contended', Price: 1 } })).body.Guid
    const lines = Array.from({ length: 20 }, () => ({ 'Product@odata.bind': `Products(${product})`, Quantity: 1 }))
    const order = await call(`${server.api}/Orders?$expand=Lines($select=Guid)`, { method: 'POST', token: admin, body: { Number: 7301, 'Customer@odata.bind': `Customers(${customer})`, Lines: lines } })
    expect(order.status, order.text).toBe(200)
    // Twenty clients at once, each changing one line of the order in a group of its own: every
    // write changes the order's Total too, so all twenty race for that row.
    const answers = await Promise.all(
      order.body.Lines.map((line: { Guid: string }, i: number) =>
        jsonBatch([{ id: 'q', atomicityGroup: 'g', method: 'PATCH', url: `OrderLines(${line.Guid})`, body: { Quantity: 2 + (i % 8) } }]),
      ),
    )
    expect(answers.map((answer) => answer.body.responses[0].status)).toEqual(answers.map(() => 204))
    const expected = order.body.Lines.reduce((total: number, _: unknown, i: number) => total + 2 + (i % 8), 0)
    expect((await call(`${server.api}/Orders(${order.body.Guid})?$select=Total`, { token: admin })).body.Total).toBe(expected)
  })

  it('refuses a batch above ApiOptions:MaxBatchRequests before any request runs', async () => {
    const before = await tablesHash()
    const requests = Array.from({ length: 1000 }, (_, i) => ({ id: String(i), method: 'POST', url: 'Customers', body: { Name: `Capped ${i}` } }))
    const answer = await jsonBatch(requests)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ code: 'QueryLimitExceeded', target: 'ApiOptions:MaxBatchRequests' })
    expect(await tablesHash()).toBe(before)
  })

  it('refuses a request the caller may not do alone, with 403, and answers the others', async () => {
    const answer = await jsonBatch(
      [
        { id: 'meta', method: 'GET', url: '$metadata?$format=json' },
        { id: 'write', method: 'POST', url: 'Customers', body: { Name: 'Clerk Wrote' } },
        { id: 'read', method: 'GET', url: 'Customers' },
      ],
      clerk,
    )
    expect(answer.status).toBe(200)
    const alone = await call(`${server.api}/Customers`, { method: 'POST', token: clerk, body: { Name: 'Clerk Wrote' } })
    const readAlone = await call(`${server.api}/Customers`, { token: clerk })
    expect(answer.body.responses.map((r: any) => r.status)).toEqual([200, alone.status, readAlone.status])
    expect(alone.status).toBe(403)
    expect(answer.body.responses[1].body.error.code).toBe(alone.body.error.code)
    expect(await customerNamed('Clerk Wrote')).toBe(0)
  })

  it("serves absolute URLs of this service's root only: another host's is a 400 naming it, not our own set", async () => {
    const before = await tablesHash()
    const root = new URL(server.api)
    const elsewhere = ['http://evil.example/api/Customers', `${root.protocol}//evil.example:${root.port}/api/Customers`, `https://${root.host}/api/Customers`, `${server.api}x/Customers`]
    const answer = await jsonBatch([
      ...elsewhere.map((url, index) => ({ id: `e${index}`, method: 'POST', url, body: { Name: 'Posted Elsewhere' } })),
      { id: 'ours', method: 'GET', url: `${server.api.toUpperCase().replace('/API', '/api')}/Customers/$count` },
      { id: 'root', method: 'GET', url: server.api },
    ])
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.responses.map((r: { status: number }) => r.status)).toEqual([400, 400, 400, 400, 200, 200])
    elsewhere.forEach((url, index) => {
      expect(answer.body.responses[index].body.error.message).toBe(`A $batch request's absolute URL must start with this service's root ${server.api}/, not '${url}'.`)
    })
    expect(await tablesHash()).toBe(before)
  })

  it('serves the service document by the root with a query, as a request alone would be', async () => {
    const alone = await call(`${server.api}?$format=json`, { token: admin })
    expect(alone.status).toBe(200)
    const answer = await jsonBatch([
      { id: 'absolute', method: 'GET', url: `${server.api}?$format=json` },
      { id: 'path', method: 'GET', url: '/api?$format=json' },
    ])
    expect(answer.body.responses.map((r: { status: number }) => r.status)).toEqual([200, 200])
    expect(answer.body.responses[0].body).toEqual(alone.body)
  })

  it('refuses malformed batches whole: duplicate ids, unknown dependencies, a bad $<id>', async () => {
    expect((await jsonBatch([{ id: 'a', method: 'GET', url: 'Customers' }, { id: 'a', method: 'GET', url: 'Customers' }])).status).toBe(400)
    expect((await jsonBatch([{ id: 'a', method: 'GET', url: 'Customers', dependsOn: ['b'] }])).status).toBe(400)
    const failed = await jsonBatch([{ id: 'a', method: 'POST', url: 'Customers', body: { Nope: 1 } }, { id: 'b', method: 'GET', url: '$a' }])
    expect(failed.body.responses.map((r: any) => r.status)).toEqual([400, 400])
    expect(failed.body.responses[1].body.error.message).toContain("'$a'")
    expect((await call(`${server.api}/$batch`, { method: 'POST', token: admin, body: { nope: [] } })).status).toBe(400)
    expect((await call(`${server.api}/$batch`, { token: admin })).status).toBe(405)
  })

  it('refuses an atomicityGroup named as a request of the batch (JSON 19.1): dependsOn could not tell them apart', async () => {
    const before = await tablesHash()
    for (const requests of [
      [{ id: 'g', method: 'POST', url: 'Customers', body: { Name: 'Never Grouped' }, atomicityGroup: 'g' }],
      [{ id: 'a', method: 'GET', url: 'Customers/$count' }, { id: 'b', method: 'POST', url: 'Customers', body: { Name: 'Never Grouped' }, atomicityGroup: 'a' }],
      [{ id: 'b', method: 'POST', url: 'Customers', body: { Name: 'Never Grouped' }, atomicityGroup: 'g' }, { id: 'g', method: 'GET', url: 'Customers/$count', dependsOn: ['g'] }],
    ]) {
      const answer = await jsonBatch(requests)
      expect([answer.status, answer.body?.error?.code], answer.text).toEqual([400, 'InvalidRequest'])
      expect(answer.body.error.message).toMatch(/^The atomicity group '(g|a)' has the name of a request of the batch/)
    }
    expect(await tablesHash()).toBe(before)
  })
})

describe('multipart $batch (4.0, as SAPUI5 sends it)', () => {
  it('answers reads and a change set with Content-ID references, each part as application/http', async () => {
    const answer = await sendMultipart(
      multipart([
        { method: 'GET', url: 'Customers?$count=true&$top=1' },
        {
          changeSet: [
            { id: '1', method: 'POST', url: 'Customers?$select=Name,CreditLimit', body: { Name: 'Multipart One', CreditLimit: 10.5 } },
            { id: '2', method: 'POST', url: 'Orders', body: { Number: 7101, 'Customer@odata.bind': '$1' } },
            { id: '3', method: 'PATCH', url: '$1', body: { City: 'Lyon' }, headers: { 'If-Match': '$1' } },
          ],
        },
        { method: 'GET', url: `Customers?$filter=Name eq 'Multipart One'&$select=City&$expand=Orders($select=Number)`.replaceAll(' ', '%20') },
      ]),
    )
    expect(answer.status, answer.text).toBe(200)
    expect(answer.type).toMatch(/^multipart\/mixed; boundary=batchresponse_/)
    const parts = readMultipart(answer.text, answer.type)
    expect(parts.map((p) => [p.status, p.contentId, p.changeSet])).toEqual([
      [200, undefined, undefined],
      [200, '1', 1],
      [200, '2', 1],
      [204, '3', 1],
      [200, undefined, undefined],
    ])
    // The part's own Accept (IEEE754Compatible=true, as UI5 sends it) is negotiated: the count is a string.
    expect(parts[0].body['@odata.count']).toMatch(/^\d+$/)
    // A write's reply too: its decimal is a string, as the part asked.
    expect(parts[1].body).toMatchObject({ Name: 'Multipart One', CreditLimit: '10.50' })
    expect(parts.every((p) => p.headers['odata-version'] === '4.0')).toBe(true)
    expect(parts[3].headers.etag).toMatch(etagAt(2))
    expect(parts[4].body.value).toMatchObject([{ City: 'Lyon', Orders: [{ Number: 7101 }] }])
  })

  it("answers a part whose absolute URL is another host's with 400 naming it", async () => {
    const before = await tablesHash()
    const answer = await sendMultipart(
      multipart([
        { method: 'GET', url: 'http://evil.example/api/Customers' },
        { changeSet: [{ id: '1', method: 'POST', url: 'http://evil.example/api/Customers', body: { Name: 'Posted Elsewhere' } }] },
        { method: 'GET', url: `${server.api}/Customers?$top=1` },
      ]),
    )
    expect(answer.status, answer.text).toBe(200)
    const parts = readMultipart(answer.text, answer.type)
    expect(parts.map((p) => p.status)).toEqual([400, 400, 200])
    const message = `A $batch request's absolute URL must start with this service's root ${server.api}/, not 'http://evil.example/api/Customers'.`
    expect(parts[0].body.error.message).toBe(message)
    expect(parts[1].body.error.message).toBe(message)
    expect(await tablesHash()).toBe(before)
  })

  it('writes nothing of a change set one of whose parts fails, and answers for the change set once', async () => {
    const before = await tablesHash()
    const answer = await sendMultipart(
      multipart([
        { changeSet: [
          { id: '1', method: 'POST', url: 'Customers', body: { Name: 'Rolled Back' } },
          { id: '2', method: 'POST', url: 'Orders', body: { Number: 7102, 'Customer@odata.bind': '$1' } },
          { id: '3', method: 'DELETE', url: 'Customers(00000000-0000-4000-8000-000000000000)' },
        ] },
        { method: 'GET', url: 'Customers?$top=1' },
      ]),
    )
    expect(answer.status).toBe(200)
    const parts = readMultipart(answer.text, answer.type)
    // The failed change set is one application/http answer in the batch, not a change set (4.0 §11.7.4).
    expect(parts.map((p) => [p.status, p.contentId, p.changeSet])).toEqual([[404, '3', undefined], [200, undefined, undefined]])
    expect(parts[0].body.error.code).toBe('NotFound')
    // It names the request that failed, for clients to attach its messages to that request.
    expect(parts[0].body.error['@Core.ContentID']).toBe('3')
    // A failed part names its OData-Version too, as the request alone would be answered.
    expect(parts.map((p) => p.headers['odata-version'])).toEqual(['4.0', '4.0'])
    expect(await tablesHash()).toBe(before)
  })

  it('numbers Content-IDs per change set, as OData 4.0 allows: $1 is the one of its own change set', async () => {
    const answer = await sendMultipart(
      multipart([
        { changeSet: [{ id: '1', method: 'POST', url: 'Customers', body: { Name: 'First Set' } }, { id: '2', method: 'PATCH', url: '$1', body: { City: 'Rome' } }] },
        { changeSet: [{ id: '1', method: 'POST', url: 'Customers', body: { Name: 'Second Set' } }, { id: '2', method: 'PATCH', url: '$1', body: { City: 'Turin' } }] },
      ]),
    )
    expect(answer.status, answer.text).toBe(200)
    const parts = readMultipart(answer.text, answer.type)
    expect(parts.map((p) => [p.status, p.contentId, p.changeSet])).toEqual([[200, '1', 1], [204, '2', 1], [200, '1', 2], [204, '2', 2]])
    const { rows } = await pool.query(`select "Name", "City" from "Customer" where "Name" in ('First Set', 'Second Set') order by "Name"`)
    expect(rows).toEqual([{ Name: 'First Set', City: 'Rome' }, { Name: 'Second Set', City: 'Turin' }])
  })

  it('refuses a part in an OData-Version this service does not speak, as the request alone, and its change set with it', async () => {
    const before = await tablesHash()
    const answer = await sendMultipart(
      multipart([
        { method: 'GET', url: 'Customers?$top=1', headers: { 'OData-Version': '5.0' } },
        { changeSet: [{ id: '1', method: 'POST', url: 'Customers', body: { Name: 'Never In Five' }, headers: { 'OData-Version': '5.0' } }] },
      ]),
    )
    expect(answer.status, answer.text).toBe(200)
    const parts = readMultipart(answer.text, answer.type)
    expect(parts.map((p) => p.status)).toEqual([400, 400])
    expect(parts[1].body.error.message).toContain('OData-Version 5.0 is not supported')
    expect(await tablesHash()).toBe(before)
  })

  it('refuses a part whose body is not JSON by its Content-Type as alone (415), and answers the others', async () => {
    const body = [
      '--b\r\nContent-Type: application/http\r\n\r\nPOST Customers HTTP/1.1\r\nContent-Type: text/plain\r\n\r\nName=Plain\r\n',
      '--b\r\nContent-Type: application/http\r\n\r\nGET Customers/$count HTTP/1.1\r\n\r\n\r\n',
      '--b--\r\n',
    ].join('')
    const answer = await sendMultipart({ body, type: 'multipart/mixed; boundary=b' })
    expect(answer.status, answer.text).toBe(200)
    const parts = readMultipart(answer.text, answer.type)
    expect(parts.map((p) => p.status)).toEqual([415, 200])
    expect(parts[0].body.error.code).toBe('UnsupportedMediaType')
  })

  it('answers a part writing a property or its raw value by its method, whatever its body, as alone', async () => {
    const key = (await call(`${server.api}/Customers`, { method: 'POST', token: admin, body: { Name: 'Raw' } })).body.Guid
    const body = [
      `--b\r\nContent-Type: application/http\r\n\r\nPUT Customers(${key})/Name/$value HTTP/1.1\r\nContent-Type: text/plain\r\n\r\nEve\r\n`,
      `--b\r\nContent-Type: application/http\r\n\r\nPATCH Customers(${key})/Name HTTP/1.1\r\nContent-Type: text/plain\r\n\r\nEve\r\n`,
      '--b--\r\n',
    ].join('')
    const answer = await sendMultipart({ body, type: 'multipart/mixed; boundary=b' })
    expect(answer.status, answer.text).toBe(200)
    const parts = readMultipart(answer.text, answer.type)
    expect(parts.map((p) => [p.status, p.body.error.code])).toEqual([[501, 'NotImplemented'], [405, 'MethodNotAllowed']])
  })

  it('refuses a multipart body it cannot read, and a Content-Type that is neither form', async () => {
    const broken = await sendMultipart({ body: '--b\r\nContent-Type: application/http\r\n\r\nGET Customers HTTP/1.1\r\n\r\n', type: 'multipart/mixed; boundary=b' })
    expect(broken.status).toBe(400)
    const text = await fetch(`${server.api}/$batch`, { method: 'POST', headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'text/plain' }, body: 'GET Customers' })
    expect(text.status).toBe(415)
  })
})

describe('the form of the $batch answer (Protocol 4.01 §11.7.1: as Accept asks, else as the request)', () => {
  const changeSet = [
    { id: '1', method: 'POST', url: 'Customers', body: { Name: 'Accepted Json' } },
    { id: '2', method: 'PATCH', url: '$1', body: { City: 'Graz' } },
  ]

  it('answers a multipart batch in JSON when Accept asks for it (JSON 19.5: in order, Content-ID as id, a change set as an atomicityGroup)', async () => {
    const answer = await sendMultipart(multipart([{ method: 'GET', url: 'Customers/$count' }, { changeSet }]), admin, { Accept: 'application/json' })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.type).toMatch(/^application\/json\b/)
    const { responses } = JSON.parse(answer.text)
    expect(responses.map((r: any) => [r.id, r.atomicityGroup, r.status])).toEqual([[undefined, undefined, 200], ['1', 'changeset-1', 200], ['2', 'changeset-1', 204]])
    expect(responses[1].body.Guid).toMatch(/^[0-9a-f-]{36}$/)
    expect(responses[1].headers.location).toContain(`Customers(${responses[1].body.Guid})`)
  })

  it('names each change set its own atomicityGroup by its place, whatever its boundary: unique, a request-id, no request\'s id (JSON 19.1, 19.5)', async () => {
    // Change sets may share a boundary (each is inside its own body part) and number their
    // Content-IDs from 1 again; a boundary may hold what a request-id may not (a space, a colon).
    const before = await tablesHash()
    const batch = multipart([
      { changeSet: [{ id: '1', method: 'POST', url: 'Customers', body: { Name: 'Own Group One' } }], boundary: 'changeset' },
      { changeSet: [{ id: '1', method: 'POST', url: 'Customers', body: { Name: 'Own Group Two', CreditLimit: 'lots' } }], boundary: 'changeset' },
      { changeSet: [{ id: '1', method: 'GET', url: 'Customers/$count' }], boundary: 'change set:3' },
    ])
    const answer = await sendMultipart(batch, admin, { Accept: 'application/json' })
    expect(answer.status, answer.text).toBe(200)
    const { responses } = JSON.parse(answer.text)
    expect(responses.map((r: any) => [r.id, r.atomicityGroup, r.status])).toEqual([['1', 'changeset-1', 200], ['1', 'changeset-2', 400], ['1', 'changeset-3', 200]])
    // The first change set is its own: committed, though the second failed.
    expect([await customerNamed('Own Group One'), await customerNamed('Own Group Two')]).toEqual([1, 0])
    expect(await tablesHash()).not.toBe(before)
    // The same batch in multipart: three answers, the failed change set once.
    const multi = await sendMultipart(batch)
    expect(readMultipart(multi.text, multi.type).map((p) => [p.status, p.changeSet])).toEqual([[200, 1], [400, undefined], [200, 2]])
    // A Content-ID may be what a group would be named: the groups are named otherwise, alike.
    const clash = await sendMultipart(
      multipart([
        { changeSet: [{ id: 'changeset-1', method: 'GET', url: 'Customers/$count' }] },
        { changeSet: [{ id: 'changeset-2', method: 'GET', url: 'Customers/$count' }] },
      ]),
      admin,
      { Accept: 'application/json' },
    )
    const groups = JSON.parse(clash.text).responses.map((r: any) => r.atomicityGroup)
    expect(groups).toEqual(['changeset--1', 'changeset--2'])
  })

  it('answers a failed change set in JSON as a JSON atomicity group: every request, the others 424', async () => {
    const before = await tablesHash()
    const failing = [...changeSet, { id: '3', method: 'DELETE', url: 'Customers(00000000-0000-4000-8000-000000000000)' }]
    const answer = await sendMultipart(multipart([{ changeSet: failing }]), admin, { Accept: 'application/json;odata.metadata=minimal' })
    expect(answer.status, answer.text).toBe(200)
    expect(JSON.parse(answer.text).responses.map((r: any) => [r.id, r.status])).toEqual([['1', 424], ['2', 424], ['3', 404]])
    expect(await tablesHash()).toBe(before)
  })

  it('answers a JSON batch in multipart when Accept asks for it: each part with its id as Content-ID, a group as a change set', async () => {
    const answer = await jsonBatch([
      { id: 'n', method: 'GET', url: 'Customers/$count' },
      { id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Accepted Multipart' }, atomicityGroup: 'g' },
      { id: 'p', method: 'PATCH', url: '$c', body: { City: 'Linz' }, atomicityGroup: 'g' },
    ], admin, { Accept: 'multipart/mixed' })
    expect(answer.status, answer.text).toBe(200)
    const type = answer.headers.get('content-type') ?? ''
    expect(type).toMatch(/^multipart\/mixed; boundary=batchresponse_/)
    expect(readMultipart(answer.text, type).map((p) => [p.status, p.contentId, p.changeSet])).toEqual([[200, 'n', undefined], [200, 'c', 1], [204, 'p', 1]])
  })

  it('takes the form the client prefers by quality, the request form when both are as good, and the request form without Accept', async () => {
    const batch = multipart([{ method: 'GET', url: 'Customers/$count' }])
    const cases: [Record<string, string>, RegExp][] = [
      [{ Accept: 'multipart/mixed;q=0.5, application/json' }, /^application\/json\b/],
      [{ Accept: 'application/json, multipart/mixed' }, /^multipart\/mixed/],
      [{ Accept: 'application/*' }, /^application\/json\b/],
      [{ Accept: 'multipart/*' }, /^multipart\/mixed/],
      [{ Accept: '*/*' }, /^multipart\/mixed/],
      [{ Accept: 'application/json;q=0, */*' }, /^multipart\/mixed/],
      [{}, /^multipart\/mixed/],
    ]
    for (const [headers, type] of cases) {
      const answer = await sendMultipart(batch, admin, headers)
      expect([answer.status, answer.type], JSON.stringify(headers)).toEqual([200, expect.stringMatching(type)])
    }
  })

  it('takes $format as Accept, and before it ($format wins over Accept, as on every resource)', async () => {
    const batch = multipart([{ method: 'GET', url: 'Customers/$count' }])
    const cases: [string, Record<string, string>, RegExp][] = [
      ['?$format=json', {}, /^application\/json\b/],
      ['?$format=application/json', {}, /^application\/json\b/],
      [`?$format=${encodeURIComponent('application/json;odata.metadata=minimal')}`, {}, /^application\/json\b/],
      ['?%24format=json', {}, /^application\/json\b/],
      ['?$format=json', { Accept: 'multipart/mixed' }, /^application\/json\b/],
      ['?$format=multipart/mixed', { Accept: 'application/json' }, /^multipart\/mixed/],
    ]
    for (const [query, headers, type] of cases) {
      const answer = await sendMultipart(batch, admin, headers, query)
      expect([answer.status, answer.type], `${query} ${JSON.stringify(headers)}: ${answer.text}`).toEqual([200, expect.stringMatching(type)])
    }
    const json = await call(`${server.api}/$batch?$format=multipart/mixed`, { method: 'POST', token: admin, body: { requests: [{ id: 'n', method: 'GET', url: 'Customers/$count' }] }, headers: { Accept: 'application/json' } })
    expect([json.status, json.headers.get('content-type')], json.text).toEqual([200, expect.stringMatching(/^multipart\/mixed; boundary=batchresponse_/)])
  })

  it('refuses a $format it cannot answer a batch in with 406, whatever Accept says, before any request runs', async () => {
    const before = await tablesHash()
    for (const format of ['xml', 'application/xml', 'text/plain']) {
      const multi = await sendMultipart(multipart([{ changeSet }]), admin, { Accept: 'application/json' }, `?$format=${encodeURIComponent(format)}`)
      expect([multi.status, JSON.parse(multi.text).error], format).toEqual([406, { code: 'NotAcceptable', message: `A $batch is answered as multipart/mixed or application/json; the request asks for $format=${format}.` }])
      const json = await call(`${server.api}/$batch?$format=${encodeURIComponent(format)}`, { method: 'POST', token: admin, body: { requests: [{ id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Never Formatted' } }] } })
      expect(json.status, format).toBe(406)
    }
    expect(await tablesHash()).toBe(before)
  })

  it('refuses a $format given more than once with 400, as every other route does, before any request runs', async () => {
    const before = await tablesHash()
    for (const query of ['?$format=json&$format=json', '?$format=multipart/mixed&format=json', '?$format=json&%24FORMAT=json']) {
      const multi = await sendMultipart(multipart([{ changeSet }]), admin, {}, query)
      expect([multi.status, JSON.parse(multi.text).error?.message], query).toEqual([400, expect.stringContaining('$format is given more than once')])
      const json = await call(`${server.api}/$batch${query}`, { method: 'POST', token: admin, body: { requests: [{ id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Never Twice' } }] } })
      expect([json.status, json.body?.error?.code], query).toEqual([400, 'InvalidQuery'])
    }
    expect(await tablesHash()).toBe(before)
  })

  it('refuses an Accept it cannot answer a batch in with 406, before any request runs', async () => {
    const before = await tablesHash()
    for (const accept of ['application/xml', 'text/plain', 'multipart/mixed;q=0, application/json;q=0']) {
      const multi = await sendMultipart(multipart([{ changeSet }]), admin, { Accept: accept })
      expect([multi.status, JSON.parse(multi.text).error], accept).toEqual([406, { code: 'NotAcceptable', message: `A $batch is answered as multipart/mixed or application/json; the request asks for Accept: ${accept}.` }])
      const json = await jsonBatch([{ id: 'c', method: 'POST', url: 'Customers', body: { Name: 'Never Accepted' } }], admin, { Accept: accept })
      expect(json.status, accept).toBe(406)
    }
    expect(await tablesHash()).toBe(before)
  })
})

describe('$batch in a workflow', () => {
  it('is one request of the workflow: one index, its writes visible to the workflow only, committed together', async () => {
    const workflow = await WorkflowClient.start(server.api, admin)
    const answer = await jsonBatch(
      [
        { id: '1', method: 'POST', url: 'Customers', body: { Name: 'Workflow Batch' }, atomicityGroup: 'g' },
        { id: '2', method: 'POST', url: 'Orders', body: { Number: 7201, 'Customer@odata.bind': '$1' }, atomicityGroup: 'g' },
        { id: '3', method: 'GET', url: `Customers?$filter=Name eq 'Workflow Batch'&$select=Name` },
      ],
      admin,
      workflow.headers(1),
    )
    expect(answer.status, answer.text).toBe(200)
    workflow.index = 1
    expect(answer.body.responses.map((r: any) => r.status)).toEqual([200, 200, 200])
    expect(answer.body.responses[2].body.value).toHaveLength(1)
    expect(await customerNamed('Workflow Batch')).toBe(0)
    const seen = await workflow.get(`Orders?$filter=Number eq 7201&$select=Number&$expand=Customer($select=Name)`)
    expect(seen.body.value).toMatchObject([{ Number: 7201, Customer: { Name: 'Workflow Batch' } }])
    expect((await workflow.commit()).status).toBe(200)
    expect(await customerNamed('Workflow Batch')).toBe(1)
  })

  it('refuses a request of the batch that names a workflow the batch does not: it would be done for good', async () => {
    const workflow = await WorkflowClient.start(server.api, admin)
    const before = await tablesHash()
    const outside = await jsonBatch([
      { id: '1', method: 'POST', url: 'Customers', headers: workflow.headers(1), body: { Name: 'Part Named A Workflow' } },
      { id: '2', method: 'GET', url: 'Customers?$top=1', headers: { 'Workflow-Index': '1' } },
    ])
    expect(outside.status, outside.text).toBe(200)
    expect(outside.body.responses.map((r: any) => [r.status, r.body.error?.code])).toEqual([
      [400, 'InvalidRequest'],
      [400, 'InvalidRequest'],
    ])
    expect(outside.body.responses[0].body.error.message).toContain('go on the $batch request itself')
    expect(await tablesHash()).toBe(before)

    // Inside the workflow, a request repeating the batch's own headers is one of its requests.
    const inside = await jsonBatch([{ id: '1', method: 'POST', url: 'Customers', headers: workflow.headers(1), body: { Name: 'Part Named A Workflow' } }], admin, workflow.headers(1))
    expect(inside.body.responses[0].status, inside.text).toBe(200)
    expect(await tablesHash()).toBe(before)
    expect((await workflow.abort()).status).toBe(200)
  })

  it('keeps nothing of a request that failed after its write (its reply), in what the workflow shows or commits', async () => {
    const workflow = await WorkflowClient.start(server.api, admin)
    // The reply's expanded $filter overflows on the data: the write is undone, the batch goes on.
    const failing = `Customers?$expand=Orders($filter=Number mul 2147483647 mul 2147483647 eq 1)`
    const answer = await jsonBatch(
      [
        { id: '1', method: 'POST', url: failing, body: { Name: 'Undone In Workflow', Orders: [{ Number: 9731 }] } },
        { id: '2', method: 'POST', url: 'Customers', body: { Name: 'Kept In Workflow' } },
      ],
      admin,
      workflow.headers(1),
    )
    expect(answer.body.responses.map((r: any) => r.status), answer.text).toEqual([400, 200])
    const kept = answer.body.responses[1].body.Guid
    workflow.index = 1
    const seen = await workflow.get(`Customers?$filter=endswith(Name,' In Workflow')&$select=Name`)
    expect(seen.body.value).toMatchObject([{ Guid: kept, Name: 'Kept In Workflow' }])
    expect((await workflow.get('Orders?$filter=Number eq 9731&$count=true')).body['@odata.count']).toBe(0)
    expect((await workflow.commit()).status).toBe(200)
    expect(await customerNamed('Undone In Workflow')).toBe(0)
    // Saved under the key the workflow gave it, not one the undone write had taken.
    const { rows } = await pool.query(`select "Guid"::text as "Guid" from "Customer" where "Name" = 'Kept In Workflow'`)
    expect(rows).toEqual([{ Guid: kept }])
  })

  it('fails whole when a request of an atomicity group fails its dependency inside a workflow: no half group', async () => {
    const workflow = await WorkflowClient.start(server.api, admin)
    const answer = await jsonBatch(
      [
        { id: 'a', method: 'POST', url: 'Customers', body: { Name: 'x', CreditLimit: 'lots' } },
        { id: 'g1', method: 'POST', url: 'Customers', body: { Name: 'Half Group' }, atomicityGroup: 'g' },
        { id: 'g2', method: 'POST', url: 'Customers', body: { Name: 'Other Half' }, atomicityGroup: 'g', dependsOn: ['a'] },
      ],
      admin,
      workflow.headers(1),
    )
    expect(answer.status, answer.text).toBe(424)
    expect(answer.body.error.code).toBe('FailedDependency')
    const next = await workflow.at(1, 'GET', `Customers?$filter=Name eq 'Half Group' or Name eq 'Other Half'`)
    expect(next.status).toBe(200)
    expect(next.body.value).toEqual([])
    expect((await workflow.abort(2)).status).toBe(200)
  })

  it('fails whole when an atomicity group fails inside a workflow, leaving the workflow as it was', async () => {
    const workflow = await WorkflowClient.start(server.api, admin)
    const answer = await jsonBatch(
      [
        { id: '1', method: 'POST', url: 'Customers', body: { Name: 'Workflow Refused' }, atomicityGroup: 'g' },
        { id: '2', method: 'POST', url: 'Customers', body: { Name: 'x', CreditLimit: 'lots' }, atomicityGroup: 'g' },
      ],
      admin,
      workflow.headers(1),
    )
    expect(answer.status).toBe(400)
    const next = await workflow.at(1, 'GET', `Customers?$filter=Name eq 'Workflow Refused'`)
    expect(next.status).toBe(200)
    expect(next.body.value).toEqual([])
    expect((await workflow.commit(2)).status).toBe(200)
    expect(await customerNamed('Workflow Refused')).toBe(0)
  })
})
