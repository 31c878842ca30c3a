// Records the SQL statements that reach one database from this process, by wrapping the
// `query` of pg's Client in both copies of pg the server loads (its own and MikroORM's).
// For servers started in the test's process (startTestServer, startQueryServer).
//
//   const recorder = recordStatements(() => databaseName)
//   const { statements } = await recorder.during(() => call(...))
//   recorder.restore()

import { createRequire } from 'node:module'

interface ClientLike {
  readonly database?: string
  query(...args: unknown[]): unknown
}
type ClientClass = { prototype: ClientLike }

const require = createRequire(import.meta.url)
const ormRequire = createRequire(require.resolve('@mikro-orm/postgresql'))

export interface StatementRecorder {
  during<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }>
  restore(): void
}

export function recordStatements(database: () => string): StatementRecorder {
  const clientClasses: ClientClass[] = [...new Set([require('pg').Client, ormRequire('pg').Client])]
  const originals = new Map<ClientClass, ClientLike['query']>()
  let recording: string[] | undefined
  for (const Client of clientClasses) {
    const original = Client.prototype.query
    originals.set(Client, original)
    Client.prototype.query = function (this: ClientLike, ...args: unknown[]) {
      if (recording && this.database === database()) {
        const config = args[0] as string | { text?: string }
        recording.push(typeof config === 'string' ? config : (config?.text ?? String(config)))
      }
      return original.apply(this, args)
    }
  }
  return {
    async during(work) {
      recording = []
      try {
        const result = await work()
        return { result, statements: recording }
      } finally {
        recording = undefined
      }
    },
    restore() {
      for (const [Client, original] of originals) Client.prototype.query = original
    },
  }
}
