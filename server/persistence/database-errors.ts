// Database exceptions, mapped once: callers see a meaning (conflict, unavailable), never an
// SQL error text. Works on pg's errors, by SQLSTATE.

import { QueryError, RequestError, ServiceError } from '../errors.ts'

export function translateDatabaseError(thrown: unknown): ServiceError | undefined {
  const error = thrown as { code?: string; detail?: string; constraint?: string; table?: string; message?: string }
  if (error?.code === '23505') {
    return RequestError.conflict(`Another entity already has this natural key${describeKey(error)}.`)
  }
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
  // A read method (or any read-only session) tried to write.
  if (error?.code === '25006') {
    return new ServiceError('Forbidden', 'A read method cannot change data; declare it with method.modify to write.')
  }
  if (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P02', '57P03', '53300'].includes(error?.code ?? '') ||
    // Refused at connection (database not accepting connections, missing, credentials): FATAL.
    ((error as { severity?: string })?.severity === 'FATAL' && ['55000', '3D000', '28000', '28P01'].includes(error?.code ?? ''))
  ) {
    return RequestError.databaseUnavailable()
  }
  return undefined
}

function describeKey(error: { detail?: string }): string {
  const match = /Key \((.+)\)=\((.+)\) already exists/.exec(error?.detail ?? '')
  return match ? ` (${match[1].replaceAll('"', '').replaceAll('_Guid', '')} = ${match[2]})` : ''
}
