// The access listener's one connection per database server (auth/access-listener.ts) carries
// this instance's barriers and its answers to every instance's markers, which overlap: they go
// one at a time, so each barrier is answered, and pg never has to queue a query behind another
// (it warns that pg 9 will refuse that, and that warning came from here).

import pg from 'pg'
import pino from 'pino'
import { afterEach, expect, it } from 'vitest'
import { ACCESS_CHANNEL, AccessListener, ANSWER, MARKER } from '../../server/auth/access-listener.ts'
import { testDatabaseUrl } from '../support/test-server.ts'

const warnings: Error[] = []
const heard = (warning: Error) => warnings.push(warning)
let listener: AccessListener | undefined
let watcher: pg.Client | undefined

afterEach(async () => {
  process.off('warning', heard)
  await listener?.close()
  await watcher?.end()
})

it('answers many barriers at once on its one connection, each by its own answer, without queueing queries in pg', async () => {
  process.on('warning', heard)
  const changes: string[] = []
  listener = new AccessListener((tenant, table) => changes.push(`${tenant}:${table}`), pino({ level: 'silent' }))
  const url = testDatabaseUrl()
  expect(await listener.listening('acme', url)).toBe(true)
  // What passes on the channel, heard by a connection of its own: the markers, and the answers to them.
  const markers = new Set<string>()
  const answers = new Set<string>()
  watcher = new pg.Client({ connectionString: url })
  await watcher.connect()
  watcher.on('notification', ({ payload = '' }) => {
    if (payload.startsWith(MARKER)) markers.add(payload.slice(MARKER.length))
    if (payload.startsWith(ANSWER)) answers.add(payload.slice(ANSWER.length))
  })
  await watcher.query(`listen ${ACCESS_CHANNEL}`)

  await Promise.all(Array.from({ length: 12 }, (_, i) => listener!.barrier('acme', url, `Table${i}`)))
  // Every marker was answered (a barrier left unanswered would end only at its timeout).
  await expect.poll(() => markers.size).toBeGreaterThanOrEqual(12)
  await expect.poll(() => [...markers].filter((id) => !answers.has(id))).toEqual([])
  await expect.poll(() => changes.length).toBe(12)
  expect(new Set(changes)).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `acme:Table${i}`)))
  expect(warnings.filter((warning) => warning.message.includes('already executing a query'))).toEqual([])
})
