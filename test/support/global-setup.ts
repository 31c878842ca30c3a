// Fails fast, with a clear message, when the test PostgreSQL is not reachable.
import pg from 'pg'
import { TEST_DATABASE_URL } from './test-server.ts'

export default async function checkDatabase(): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    throw new Error(`The test PostgreSQL at ${TEST_DATABASE_URL} is not reachable (${(error as Error).message}). Set TEST_DATABASE_URL.`)
  } finally {
    await client.end().catch(() => {})
  }
}
