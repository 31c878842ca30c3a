// The access listener's one connection per database server (auth/access-listener.ts) carries
// this instance's barriers and its answers to every instance's markers, which overlap: they go
// one at a time, so each barrier is answered, and pg never has to queue a query behind another
// (it warns that pg 9 will refuse that, and that warning came from here).

import pino from 'pino'
import { afterEach, expect, it } from 'vitest'
import { AccessListener } from '../../server/auth/access-listener.ts'
import { testDatabaseUrl } from '../support/test-server.ts'

const warnings: Error[] = []
const heard = (warning: Error) => warnings.push(warning)
let listener: AccessListener | undefined

afterEach(async () => {
  process.off('warning', heard)
  await listener?.close()
})

it('answers many barriers at once on its one connection, each by its own answer, without queueing queries in pg', async () => {
  process.on('warning', heard)
  const changes: string[] = []
  listener = new AccessListener((tenant, table) => changes.push(`${tenant}:${table}`), pino({ level: 'silent' }))
  const url = testDatabaseUrl()
  expect(await listener.listening('acme', url)).toBe(true)

  const started = performance.now()
  await Promise.all(Array.from({ length: 12 }, (_, i) => listener!.barrier('acme', url, `Table${i}`)))
  // A barrier not answered ends after its 1 s timeout; twelve answered ones take a few round trips.
  expect(performance.now() - started).toBeLessThan(900)
  await expect.poll(() => changes.length).toBe(12)
  expect(new Set(changes)).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `acme:Table${i}`)))
  expect(warnings.filter((warning) => warning.message.includes('already executing a query'))).toEqual([])
})
