// The tests' PostgreSQL (test/support/global-setup.ts): TEST_DATABASE_URL when set, else an
// embedded one started for the run; either way test workers, and the processes they spawn,
// see its URL and it answers.
import { spawnSync } from 'node:child_process'
import pg from 'pg'
import { expect, inject, test } from 'vitest'
import { testDatabaseUrl } from '../support/test-server.ts'

test('the test PostgreSQL is published to workers and child processes, and answers', async () => {
  const url = testDatabaseUrl()
  expect(url).toMatch(/^postgres(ql)?:\/\//)
  expect(inject('testDatabaseUrl')).toBe(url)
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(process.env.TEST_DATABASE_URL ?? "")'], { encoding: 'utf8' })
  expect(child.stdout).toBe(url)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }])
  } finally {
    await client.end()
  }
})
