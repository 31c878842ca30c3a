// The replies of writes and methods are written as the client negotiated, exactly as reads are
// (issue #17): odata.metadata=none|minimal|full and IEEE754Compatible=true from Accept or
// $format, decimals as strings whether PostgreSQL wrote them or a plugin computed them (virtual
// properties, method values), and a context URL naming what a read of the same shape names
// (OData 4.01 §10: the default projection without $select, expanded navigations with their lists).

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { etagAt } from '../support/entity-tags.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./reply-plugins', import.meta.url)) })
  token = await server.token()
})
afterAll(async () => server?.stop())

const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => call(`${server.api}/${path}`, { method, token, body, headers })

const IEEE754 = { Accept: 'application/json;odata.metadata=minimal;IEEE754Compatible=true' }
const FULL = { Accept: 'application/json;odata.metadata=full;IEEE754Compatible=true' }
const NONE = { Accept: 'application/json;odata.metadata=none' }

async function meter(reading: number): Promise<string> {
  const created = await send('POST', 'Meters', { Reading: reading, Samples: [{ Value: 1 }] })
  expect(created.status, created.text).toBe(200)
  return created.body.Guid
}

describe("a write's reply, in the negotiated format", () => {
  it('POST: stored and virtual decimals as strings under IEEE754Compatible=true, as numbers without', async () => {
    const created = await send('POST', 'Meters?$select=Reading,Upper', { Reading: 12.5 }, IEEE754)
    expect(created.status, created.text).toBe(200)
    expect(created.headers.get('content-type')).toContain('IEEE754Compatible=true')
    expect(created.body).toMatchObject({ Reading: '12.50', Upper: '12.75' })
    const plain = await send('POST', 'Meters?$select=Reading,Upper', { Reading: 12.5 })
    expect(plain.body).toMatchObject({ Reading: 12.5, Upper: 12.75 })
    expect(plain.headers.get('content-type')).not.toContain('IEEE754Compatible')
  })

  it('PATCH and PUT answering with the entity: odata.metadata none and full, from Accept or $format, as the read writes it', async () => {
    const key = await meter(1)
    const none = await send('PATCH', `Meters(${key})?$select=Reading`, { Reading: 2 }, { ...NONE, Prefer: 'return=representation' })
    expect(none.status, none.text).toBe(200)
    expect(none.headers.get('content-type')).toContain('odata.metadata=none')
    expect(none.body).toEqual({ Guid: key, Reading: 2 })
    expect(none.headers.get('etag')).toMatch(etagAt(2))
    // Read back by the write's own statement (the written row alone), in the asked format all the same.
    const readBack = await send('PATCH', `Meters(${key})?$select=Reading`, { Reading: 2.5 }, { ...FULL, Prefer: 'return=representation' })
    expect(readBack.body).toEqual((await send('GET', `Meters(${key})?$select=Reading`, undefined, FULL)).body)
    expect(readBack.body.Reading).toBe('2.50')
    const full = await send('PUT', `Meters(${key})?$select=Reading,Upper&$expand=Samples&$format=application/json;odata.metadata=full;IEEE754Compatible=true`, { Reading: 3 })
    expect(full.status, full.text).toBe(200)
    expect(full.headers.get('content-type')).toContain('odata.metadata=full')
    expect(full.body).toMatchObject({ '@odata.type': '#entityctl.Meter', '@odata.id': `Meters(${key})`, Reading: '3.00', Upper: '3.25' })
    // A virtual value is typed as a stored one, and written among the structural properties.
    const keys = Object.keys(full.body)
    expect(keys.slice(keys.indexOf('Upper') - 1, keys.indexOf('Upper') + 1)).toEqual(['Upper@odata.type', 'Upper'])
    expect(full.body['Upper@odata.type']).toBe('#Decimal')
    expect(keys.indexOf('Upper')).toBeLessThan(keys.indexOf('Samples@odata.navigationLink'))
    expect(full.body).toEqual((await send('GET', `Meters(${key})?$select=Reading,Upper&$expand=Samples`, undefined, FULL)).body)
    // The answer, control information and method advertisements included, can be sent back as it is.
    const { Samples: _samples, ...written } = full.body
    const again = await send('PUT', `Meters(${key})`, { ...written, Reading: 4 })
    expect(again.status, again.text).toBe(204)
  })

  it("an action's entities and entity, and a function's decimal value", async () => {
    const key = await meter(4)
    const all = await send('POST', 'Meters/ResetAll?$select=Reading,Upper&$count=true&$expand=Samples($count=true)', {}, IEEE754)
    expect(all.status, all.text).toBe(200)
    expect(all.headers.get('content-type')).toContain('IEEE754Compatible=true')
    // Counts are Edm.Int64: strings too.
    expect(all.body['@odata.count']).toMatch(/^\d+$/)
    expect(all.body.value[0]['Samples@odata.count']).toMatch(/^\d+$/)
    expect(all.body.value.find((m: { Guid: string }) => m.Guid === key)).toMatchObject({ Reading: '0.00', Upper: '0.25' })
    const one = await send('POST', `Meters(${key})/Reset?$select=Reading`, {}, FULL)
    expect(one.status, one.text).toBe(200)
    expect(one.body).toEqual((await send('GET', `Meters(${key})?$select=Reading`, undefined, FULL)).body)
    await send('PATCH', `Meters(${key})`, { Reading: 5 })
    const total = await send('GET', 'Meters/Total', undefined, { Accept: 'application/json;odata.metadata=none;IEEE754Compatible=true' })
    expect(total.status, total.text).toBe(200)
    expect(total.body).toEqual({ value: expect.stringMatching(/^\d+(\.\d+)?$/) })
    expect(typeof (await send('GET', 'Meters/Total')).body.value).toBe('number')
  })
})

describe("a write's context URL, as the read of the same shape names it", () => {
  const SHAPES = ['', '$select=Reading', '$expand=Samples', '$select=Reading,Upper&$expand=Samples($select=Value)', '$select=*', '$compute=Reading mul 2 as Double', '$compute=Reading mul 2 as Double&$select=Double']
  it.each(SHAPES)('?%s', async (options) => {
    const created = await send('POST', `Meters?${options}`, { Reading: 1, Samples: [{ Value: 2 }] })
    expect(created.status, created.text).toBe(200)
    const key = created.body.Guid
    const read = await send('GET', `Meters(${key})?${options}`)
    expect(created.body['@odata.context']).toBe(read.body['@odata.context'])
    // The same members too: a $compute value is answered as the read answers it.
    expect(Object.keys(created.body).sort()).toEqual(Object.keys(read.body).sort())
    const patched = await send('PATCH', `Meters(${key})?${options}`, { Reading: 3 }, { Prefer: 'return=representation' })
    // Asked for its representation, a write without $select answers with the whole entity, not the key (plugins/README.md).
    if (options.includes('$select')) expect(patched.body['@odata.context']).toBe(read.body['@odata.context'])
    else expect(patched.body['@odata.context']).not.toContain('Guid')
    if (options.includes('Double')) expect(patched.body.Double).toBe(6)
  })

  it('names the default projection without $select', async () => {
    const created = await send('POST', 'Meters', { Reading: 1 })
    expect(created.body['@odata.context']).toBe(`${server.api}/$metadata#Meters(Guid)/$entity`)
  })

  it("of a method's entity and entities too", async () => {
    const key = await meter(6)
    const one = await send('POST', `Meters(${key})/Reset`, {})
    expect(one.body['@odata.context']).toBe(`${server.api}/$metadata#Meters(Guid)/$entity`)
    const options = '$select=Reading&$expand=Samples($select=Value)'
    const all = await send('POST', `Meters/ResetAll?${options}`, {})
    expect(all.body['@odata.context']).toBe((await send('GET', `Meters?${options}`)).body['@odata.context'])
    expect(all.body['@odata.context']).toBe(`${server.api}/$metadata#Meters(Reading,Samples(Value))`)
  })
})

describe('decimals past what a JavaScript number keeps', () => {
  it('refuses a string with more than 15 significant digits instead of storing it rounded, and keeps 15', async () => {
    const refused = await send('POST', 'Meters', { Wide: '1234567890123456.78' }, IEEE754)
    expect(refused.status, refused.text).toBe(400)
    expect(refused.body.error.details).toEqual([expect.objectContaining({ target: 'Wide', message: expect.stringContaining('more significant digits than are kept exactly (15)') })])
    const kept = await send('POST', 'Meters?$select=Wide', { Wide: '1234567890123.45' }, IEEE754)
    expect(kept.status, kept.text).toBe(200)
    expect(kept.body.Wide).toBe('1234567890123.45')
    const negative = await send('POST', 'Meters?$select=Wide', { Wide: '-0.50' }, IEEE754)
    expect(negative.body.Wide).toBe('-0.50')
  })
})

describe('virtual decimals on reads', () => {
  it('are strings under IEEE754Compatible=true, computed from the stored decimal as a number', async () => {
    const key = await meter(12.5)
    expect((await send('GET', `Meters(${key})?$select=Reading,Upper`, undefined, IEEE754)).body).toMatchObject({ Reading: '12.50', Upper: '12.75' })
    expect((await send('GET', `Meters(${key})?$select=Upper`, undefined, IEEE754)).body).toMatchObject({ Upper: '12.75' })
    expect((await send('GET', `Meters?$select=Reading,Upper&$filter=Guid eq ${key}`, undefined, IEEE754)).body.value).toEqual([expect.objectContaining({ Reading: '12.50', Upper: '12.75' })])
    const sample = await send('GET', `Samples?$filter=Meter/Guid eq ${key}&$expand=Meter($select=Upper)`, undefined, IEEE754)
    expect(sample.body.value[0].Meter).toMatchObject({ Upper: '12.75' })
    expect((await send('GET', `Meters(${key})/Upper`, undefined, IEEE754)).body.value).toBe('12.75')
  })

  it('are numbers without it', async () => {
    const key = await meter(12.5)
    expect((await send('GET', `Meters(${key})?$select=Reading,Upper`)).body).toMatchObject({ Reading: 12.5, Upper: 12.75 })
    expect((await send('GET', `Meters(${key})/Upper`)).body.value).toBe(12.75)
  })
})
