// A value computed through a reference (a line's Title from its product's Code) stays right
// when the referenced entity changes while entities that read it are written: the change
// finds every reader under a lock of its row, and a reader's write holds the row it read.
// An outside client holding the product's row (FOR NO KEY UPDATE) makes each interleaving
// happen every time: the product's change is kept after it found the lines, or before.

import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantPool } from '../auth/helpers.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

let server: TestServer
let token: string
let api: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
  api = server.api
})
afterAll(async () => server?.stop())

const send = (method: string, path: string, body?: unknown) => call(`${api}/${path}`, { method, token, body })

/** A customer, product `code` and order `number`, saved. */
async function saveOrder(number: number, code: string): Promise<{ product: string; order: string }> {
  const customer = (await send('POST', 'Customers', { Name: `Customer ${number}` })).body.Guid
  const product = (await send('POST', 'Products', { Code: code, Name: 'Widget', Price: 2 })).body.Guid
  const order = (await send('POST', 'Orders', { Number: number, 'Customer@odata.bind': `Customers(${customer})` })).body.Guid
  return { product, order }
}

/**
 * Runs `during` while an outside transaction holds the product's row, then lets it go.
 * `during` is given a wait for the moment `n` sessions wait for a lock (on the product's row,
 * or behind one that does), or `settled` has, whichever comes first.
 */
async function holdingRow(product: string, during: (waiting: (n: number, settled: Promise<unknown>) => Promise<void>) => Promise<void>): Promise<void> {
  const pool = tenantPool(server)
  const holder = await pool.connect()
  const waiting = async (n: number, settled: Promise<unknown>) => {
    let done = false
    void settled.finally(() => (done = true))
    // Asked outside the holder's transaction, whose view of pg_stat_activity stays as first read.
    while (!done && (await pool.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0].n < n) {
      await delay(10)
    }
  }
  try {
    await holder.query('begin')
    await holder.query('select 1 from "Product" where "Guid" = $1 for no key update', [product])
    await during(waiting)
    await holder.query('commit')
  } finally {
    holder.release()
    await pool.end()
  }
}

const titles = async (order: string) => (await send('GET', `OrderLines?$select=Title&$filter=Order/Guid eq ${order}`)).body.value.map((line: { Title: string }) => line.Title)

describe('a value computed through a reference, under concurrent writes', () => {
  it('follows a product code changed while a line of it is created', async () => {
    const { product, order } = await saveOrder(1, 'OLD1')
    let renamed!: Promise<Awaited<ReturnType<typeof send>>>
    let created!: Promise<Awaited<ReturnType<typeof send>>>
    await holdingRow(product, async (waiting) => {
      // The code change waits for the row first; the line is posted while it waits.
      renamed = send('PATCH', `Products(${product})`, { Code: 'NEW1' })
      await waiting(1, renamed)
      created = send('POST', 'OrderLines', { 'Order@odata.bind': `Orders(${order})`, 'Product@odata.bind': `Products(${product})`, Quantity: 1 })
      await waiting(2, created)
    })
    expect((await renamed).status).toBe(204)
    expect((await created).status).toBe(200)
    expect(await titles(order)).toEqual(['Order 1 / NEW1'])
  })

  it('follows a product code changed while a line moves to it', async () => {
    const { product: old, order } = await saveOrder(2, 'OLD2')
    const other = (await send('POST', 'Products', { Code: 'OTHER2', Name: 'Gadget', Price: 3 })).body.Guid
    const line = (await send('POST', 'OrderLines', { 'Order@odata.bind': `Orders(${order})`, 'Product@odata.bind': `Products(${other})`, Quantity: 1 })).body.Guid
    let renamed!: Promise<Awaited<ReturnType<typeof send>>>
    let moved!: Promise<Awaited<ReturnType<typeof send>>>
    await holdingRow(old, async (waiting) => {
      renamed = send('PATCH', `Products(${old})`, { Code: 'NEW2' })
      await waiting(1, renamed)
      moved = send('PATCH', `OrderLines(${line})`, { 'Product@odata.bind': `Products(${old})` })
      await waiting(2, moved)
    })
    expect((await renamed).status).toBe(204)
    expect((await moved).status).toBe(204)
    expect(await titles(order)).toEqual(['Order 2 / NEW2'])
  })

  it('stays right with many lines created while the code changes again and again', async () => {
    const { product, order } = await saveOrder(3, 'C0')
    const created = Promise.all(Array.from({ length: 30 }, () => send('POST', 'OrderLines', { 'Order@odata.bind': `Orders(${order})`, 'Product@odata.bind': `Products(${product})`, Quantity: 1 })))
    for (let i = 1; i <= 6; i++) expect((await send('PATCH', `Products(${product})`, { Code: `C${i}` })).status).toBe(204)
    expect((await created).map((answer) => answer.status)).toEqual(Array(30).fill(200))
    expect(new Set(await titles(order))).toEqual(new Set(['Order 3 / C6']))
  })
})
