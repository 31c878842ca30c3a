// Database exceptions, mapped once: callers see a meaning (conflict, unavailable), never an
// SQL error text. Works on pg's errors, by SQLSTATE.

import { MethodError, QueryError, RequestError, ServiceError } from '../errors.ts'

export function translateDatabaseError(thrown: unknown): ServiceError | undefined {
  const error = thrown as { code?: string; detail?: string; constraint?: string; table?: string; message?: string }
  if (error?.code === '23505') return naturalKeyTaken(thrown)
  if (error?.code === '23503') {
    const detail = (thrown as { detail?: string }).detail ?? ''
    if (/is still referenced/.test(detail) || /update or delete/.test(error?.message ?? '')) {
      return RequestError.conflict(`The entity is still referenced by ${error.table ?? 'another entity'} and cannot be deleted.`)
    }
    return RequestError.invalid('A reference points to an entity that does not exist.')
  }
  if (error?.code === '23502') {
    return RequestError.invalid('A required value is missing.')
  }
  if (error?.code === '22P02' || error?.code === '22007' || error?.code === '22008' || error?.code === '22003') {
    return RequestError.invalid('A value has the wrong format or is out of range for its type.')
  }
  // Raised while evaluating a query's expressions: a bad regular expression, a division by
  // zero, a substring past its bounds.
  if (error?.code === '2201B' || error?.code === '22012' || error?.code === '22011') {
    return QueryError.invalid(`The query cannot be evaluated: ${String(error.message).split('\n')[0]}.`)
  }
  // The last line of defence for values PostgreSQL refuses that the parsers and body reader
  // should have refused already (a NUL, bytes that are not UTF-8, a string too long), and for
  // a statement too large or too deep for it: caused by the request, so a 400, never a 500.
  if (error?.code === '22021' || error?.code === '22P05') {
    return RequestError.invalid(`A text value holds a character the database cannot store, such as NUL (SQLSTATE ${error.code}).`)
  }
  if (error?.code === '22001') {
    return RequestError.invalid('A value is longer than its property allows (SQLSTATE 22001).')
  }
  // 42601 is a syntax error, a bug of ours, unless the parser ran out of stack on a deep statement.
  if (error?.code?.startsWith('54') || (error?.code === '42601' && /^memory exhausted/.test(error.message ?? ''))) {
    return new ServiceError('QueryLimitExceeded', `The request is too large or too deeply nested for the database to run (SQLSTATE ${error.code}).`)
  }
  if (error?.code?.length === 5 && error.code.startsWith('22')) {
    return RequestError.invalid(`A value is not acceptable to the database (SQLSTATE ${error.code}).`)
  }
  // A row changed under a write (unit-of-work.ts), or two writes deadlocked, where the write
  // could not simply run again: inside a $batch change set, whose transaction is already gone.
  if (metAnotherWrite(thrown)) {
    return RequestError.conflict('The data changed under this write by a concurrent write; nothing of it was saved: send it again.')
  }
  // A read method (or any read-only session) tried to write.
  if (error?.code === '25006') {
    return MethodError.readOnly()
  }
  // statement_timeout (ApiOptions:QueryTimeoutSeconds). A cancel for another reason (the
  // client left, an administrator) is the service's doing too: unavailable, not a client error.
  if (error?.code === '57014') {
    return /statement timeout/.test(error.message ?? '') ? RequestError.queryTimeout() : RequestError.databaseUnavailable()
  }
  // A table or column of this server's plugins is not in the tenant's database: the schema was
  // migrated under the running server (`entityctl migrate` with other plugins). Another
  // instance, started with those plugins, can serve the request; this one must be restarted.
  if (error?.code === '42703' || error?.code === '42P01') return RequestError.schemaChanged()
  if (!error?.code && error?.message === POOL_TIMEOUT_MESSAGE) return RequestError.noConnection()
  if (isLostConnection(thrown) || error?.code === '53300' ||
    // Refused at connection (database not accepting connections, missing, credentials): FATAL.
    ((error as { severity?: string })?.severity === 'FATAL' && ['55000', '3D000', '28000', '28P01'].includes(error?.code ?? ''))
  ) {
    return RequestError.databaseUnavailable()
  }
  // Out of a resource (class 53: a full disk, memory) or a system error (58: an I/O error):
  // nothing the client did, and the database may serve the same request later.
  if (error?.code?.startsWith('53') || error?.code?.startsWith('58')) return RequestError.databaseStrained(error.code)
  return undefined
}

/**
 * What PostgreSQL or the driver said about a failure, for the log and never for the client
 * (which gets the meaning): its SQLSTATE or socket code and its message's first line, which
 * name the database, role or setting without any password.
 */
export function databaseCause(thrown: unknown): { code?: string; message: string } {
  const error = thrown as { code?: unknown; message?: unknown }
  const code = typeof error?.code === 'string' ? error.code : undefined
  const message = String(typeof error?.message === 'string' ? error.message : thrown).split('\n')[0]
  return code ? { code, message } : { message }
}

/**
 * Whether a write failed for meeting another, and may simply run again: a row it read changed
 * before its statement (40001, raised by the unit of work's version check) or PostgreSQL broke
 * a deadlock between the two (40P01).
 */
export function metAnotherWrite(thrown: unknown): boolean {
  const code = (thrown as { code?: string })?.code
  return code === '40001' || code === '40P01'
}

/** Socket-level failures: the peer went away, or never answered. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
/** What pg says, without a SQLSTATE, about a connection that broke or was closed under it. */
const LOST_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  // The tenant's pool was closed under the request: the tenant was removed, disabled or changed.
  'Cannot use a pool after calling end on the pool',
]
/** pg-pool's words when no connection became free within its connectionTimeoutMillis. */
const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect'

/**
 * Whether the error means the connection is gone or unusable: the server terminated the
 * backend (57P01 admin shutdown or pg_terminate_backend, 57P02 crash, 57P03 starting up), a
 * connection exception (class 08), a socket error, or pg's own words for a dropped
 * connection. Such a connection must be destroyed, never returned to the pool.
 */
export function isLostConnection(thrown: unknown): boolean {
  const error = thrown as { code?: unknown; message?: unknown; severity?: unknown }
  if (!error || typeof error !== 'object') return false
  const code = typeof error.code === 'string' ? error.code : ''
  if (code === '57P01' || code === '57P02' || code === '57P03' || NETWORK_CODES.has(code)) return true
  // A protocol violation the server answers with an ERROR (a statement given the wrong number
  // of parameters: our bug, a 500) leaves the connection in use; only a FATAL one ends it.
  if (code.startsWith('08')) return code !== '08P01' || error.severity === 'FATAL'
  const message = typeof error.message === 'string' ? error.message : ''
  return code === '' && LOST_CONNECTION_MESSAGES.some((known) => message.startsWith(known))
}

/**
 * A unique violation (23505: a natural key another row has) as 409, its properties named as
 * the API's clients name them (`publicName`: ApiOptions:EnableLowerCamelCase, as the unit of
 * work knows it); undefined for any other error.
 */
export function naturalKeyTaken(thrown: unknown, publicName: (declared: string) => string = (name) => name): ServiceError | undefined {
  const error = thrown as { code?: string; detail?: string }
  if (error?.code !== '23505') return undefined
  return RequestError.conflict(`Another entity already has this natural key${describeKey(error, publicName)}.`)
}

function describeKey(error: { detail?: string }, publicName: (declared: string) => string): string {
  const match = /Key \((.+)\)=\((.+)\) already exists/.exec(error?.detail ?? '')
  if (!match) return ''
  // The columns of the natural key's properties: `"Code"`, a reference's `"Customer_Guid"`.
  const names = match[1].split(', ').map((column) => publicName(column.replaceAll('"', '').replace(/_Guid$/, '')))
  return ` (${names.join(', ')} = ${match[2]})`
}
