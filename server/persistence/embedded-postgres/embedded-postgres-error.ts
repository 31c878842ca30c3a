// EmbeddedPostgresError, the one error of the embedded PostgreSQL, worded for the person running
// entityctl. A file of its own so the modules below start-embedded.ts (which re-exports it) can
// throw it without importing back up.

export class EmbeddedPostgresError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EmbeddedPostgresError'
  }
}

/** The first line of an error's message: the cause quoted inside our own messages. */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.split('\n')[0]
}
