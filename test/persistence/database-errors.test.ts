// The last line of defence: errors PostgreSQL raises for values and statements a request caused
// (a NUL, bytes that are not UTF-8, a value too long, a statement too deep) or for writes that
// met others (a changed row, a deadlock) are a 4xx with a meaning, never a 500. Raised by the real test PostgreSQL, mapped by translateDatabaseError.

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { translateDatabaseError } from '../../server/persistence/database-errors.ts'
import { testDatabaseUrl } from '../support/test-server.ts'

let client: pg.Client
beforeAll(async () => {
  client = new pg.Client({ connectionString: testDatabaseUrl() })
  await client.connect()
  await client.query('create temporary table short_text (value varchar(2))')
})
afterAll(async () => client?.end())

async function refusal(sql: string, values: unknown[] = []): Promise<unknown> {
  try {
    await client.query(sql, values)
  } catch (error) {
    return error
  }
  throw new Error(`expected PostgreSQL to refuse: ${sql}`)
}

describe('translateDatabaseError', () => {
  it.each([
    ['a NUL in text (22021)', "select convert_from('\\x610062'::bytea, 'UTF8')", [], 400, 'InvalidRequest', 'cannot store, such as NUL (SQLSTATE 22021)'],
    ['a NUL in a JSON string (22P05)', "select ($1::jsonb ->> 'a')", ['{"a":"x\\u0000"}'], 400, 'InvalidRequest', 'SQLSTATE 22P05'],
    ['a value too long (22001)', 'insert into short_text values ($1)', ['abc'], 400, 'InvalidRequest', 'longer than its property allows'],
    ['a statement too deep to plan (54001)', `select ${'1+'.repeat(100_000)}1`, [], 400, 'QueryLimitExceeded', 'SQLSTATE 54001'],
    ["a statement too deep to parse (42601, 'memory exhausted')", `select ${'('.repeat(20_000)}1${')'.repeat(20_000)}`, [], 400, 'QueryLimitExceeded', 'too deeply nested'],
    ['another data exception (22023)', "select repeat('x', 1) from generate_series(1, 1, 0)", [], 400, 'InvalidRequest', 'SQLSTATE 22023'],
    // Raised by a flush whose rows changed, or by a deadlock, where the write cannot run again ($batch).
    ['a row changed under a write (40001)', "do $$ begin raise exception using errcode = '40001', message = 'a row changed since it was read'; end $$", [], 409, 'Conflict', 'send it again'],
    ['a deadlock (40P01)', "do $$ begin raise exception using errcode = '40P01', message = 'deadlock detected'; end $$", [], 409, 'Conflict', 'send it again'],
  ])('maps %s to a 4xx', async (_what, sql, values, status, code, message) => {
    const error = translateDatabaseError(await refusal(sql, values))
    expect(error).toMatchObject({ status, code, message: expect.stringContaining(message) })
  })

  it.each([
    ['a full disk (53100)', '53100', 'could not extend file'],
    ['no memory left (53200)', '53200', 'out of memory'],
    ['an I/O error (58030)', '58030', 'could not read block'],
  ])('maps %s to a 503 with Retry-After', async (_what, sqlState, message) => {
    const error = translateDatabaseError(await refusal(`do $$ begin raise exception using errcode = '${sqlState}', message = '${message}'; end $$`))
    expect(error).toMatchObject({ status: 503, code: 'ServiceUnavailable', message: expect.stringContaining(`SQLSTATE ${sqlState}`) })
    expect(error!.headers['Retry-After']).toMatch(/^\d+$/)
  })
})
