// Every failure a client can cause is a ServiceError: a stable code, its HTTP status and a
// message that names the problem. The error boundary (http/error-boundary.ts) turns it into
// the OData JSON error body; anything else reaching the boundary is a bug and answers 500.
// Wording lives in the factories below, so call sites read as the failure they report.

export interface ErrorDetail {
  readonly code: string
  readonly message: string
  readonly target?: string
}

/** Code → status. Once published, a code keeps its meaning. */
export const STATUS_OF_CODE = {
  InvalidRequest: 400,
  InvalidQuery: 400,
  QueryLimitExceeded: 400,
  ValidationFailed: 400,
  MissingParameter: 400,
  InvalidParameter: 400,
  RoleCycle: 400,
  WorkflowLimitExceeded: 400,
  /** A plugin's method declined the call for a reason of the business (its refuse()): the message is the plugin's. */
  MethodRefused: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  WorkflowNotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  Conflict: 409,
  RoleHasChildren: 409,
  WorkflowIndexConflict: 409,
  /** The request head or body did not arrive in time (http/http-server.ts). */
  RequestTimeout: 408,
  PreconditionFailed: 412,
  /** A $batch request that depends on one that failed (odata/handlers/batch-handler.ts). */
  FailedDependency: 424,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  /** The request line and headers exceed Server:MaxHeaderBytes (http/http-server.ts). */
  HeadersTooLarge: 431,
  TooManyRequests: 429,
  /** The server's configuration, not the request, is at fault; said plainly rather than as a bug. */
  EncryptionKeyMismatch: 500,
  /** A bug met by one request of a $batch: the others still get their answers. */
  InternalError: 500,
  /** A plugin's code, not the request, is at fault (a rule or method out of time, a wrong value): said plainly, naming it. */
  PluginFailed: 500,
  NotImplemented: 501,
  ServiceUnavailable: 503,
  /** A statement ran past ApiOptions:QueryTimeoutSeconds; the request was valid, the service lacked the time. */
  QueryTimeout: 503,
} as const

export type ErrorCode = keyof typeof STATUS_OF_CODE

/**
 * An error answer stays small whatever the request held: at most MAX_DETAILS details (the
 * others are counted), and texts that quote a client's input are shortened. A body of
 * 200,000 bad members is one short answer and one short log line, not megabytes of each.
 */
export const ERROR_BOUNDS = { maxDetails: 20, messageChars: 2000, detailChars: 500, targetChars: 200 } as const

/** `text` cut to `max` characters, with a marker saying how much was left out. */
export function shortened(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`
}

export class ServiceError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly target: string | undefined
  /** The first ERROR_BOUNDS.maxDetails details; omittedDetails counts the rest. */
  readonly details: readonly ErrorDetail[]
  readonly omittedDetails: number
  /** Extra response headers, e.g. WWW-Authenticate or Retry-After. */
  readonly headers: Readonly<Record<string, string>>

  constructor(
    code: ErrorCode,
    message: string,
    options: { target?: string; details?: readonly ErrorDetail[]; omittedDetails?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    // `cause`: for the log only (its stack says where plugin code threw), never the client's answer.
    super(shortened(message, ERROR_BOUNDS.messageChars), options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ServiceError'
    this.code = code
    this.status = STATUS_OF_CODE[code]
    this.target = options.target === undefined ? undefined : shortened(options.target, ERROR_BOUNDS.targetChars)
    const details = options.details ?? []
    this.details = details.slice(0, ERROR_BOUNDS.maxDetails).map(boundedDetail)
    this.omittedDetails = (options.omittedDetails ?? 0) + Math.max(0, details.length - ERROR_BOUNDS.maxDetails)
    this.headers = options.headers ?? {}
  }
}

function boundedDetail(detail: ErrorDetail): ErrorDetail {
  const message = shortened(detail.message, ERROR_BOUNDS.detailChars)
  const target = detail.target === undefined ? undefined : shortened(detail.target, ERROR_BOUNDS.targetChars)
  return message === detail.message && target === detail.target ? detail : { ...detail, message, ...(target === undefined ? {} : { target }) }
}

/** Quotes the text around a position, the way parse errors point at the problem. */
export function pointAt(text: string, position: number): string {
  return `at position ${position} in '${text}'`
}

/** Suggests the closest known name, for "did you mean" hints. */
export function closestName(wanted: string, known: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const name of known) {
    const distance = editDistance(wanted.toLowerCase(), name.toLowerCase())
    if (distance < bestDistance) {
      best = name
      bestDistance = distance
    }
  }
  return bestDistance <= Math.max(2, Math.floor(wanted.length / 3)) ? best : undefined
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]
}

export const QueryError = {
  syntax: (option: string, text: string, position: number, problem: string) =>
    new ServiceError('InvalidQuery', `Invalid ${option}: ${problem} ${pointAt(text, position)}.`, { target: option }),
  invalid: (message: string, target?: string) => new ServiceError('InvalidQuery', message, { target }),
  limitExceeded: (limit: string, requested: number, allowed: number) =>
    new ServiceError('QueryLimitExceeded', `${limit} is ${allowed}; the request asks for ${requested}.`, { target: limit }),
  unknownProperty: (set: string, name: string, known: Iterable<string>) => {
    const hint = closestName(name, known)
    return new ServiceError('InvalidQuery', `${set} has no property '${name}'${hint ? `; did you mean '${hint}'?` : '.'}`, {
      target: name,
    })
  },
  notPersisted: (set: string, name: string, where: string) =>
    new ServiceError(
      'InvalidQuery',
      `${set}.${name} is not persisted (it is computed after loading), so it cannot be used in ${where}.`,
      { target: name },
    ),
  encrypted: (set: string, name: string, where: string) =>
    new ServiceError('InvalidQuery', `${set}.${name} is stored encrypted, so it cannot be used in ${where}.`, {
      target: name,
    }),
}

export const RequestError = {
  invalid: (message: string, target?: string) => new ServiceError('InvalidRequest', message, { target }),
  notFound: (message: string) => new ServiceError('NotFound', message),
  methodNotAllowed: (method: string, path: string, allowed: readonly string[]) =>
    new ServiceError('MethodNotAllowed', `${method} is not allowed on ${path}; ${allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'it takes no method, only the paths under it do'}.`, {
      headers: { Allow: allowed.join(', ') },
    }),
  unsupportedMediaType: (type: string) =>
    new ServiceError('UnsupportedMediaType', `Request bodies must be application/json, not '${type}'.`),
  /** A body's size in entities (odata/handlers/body-reader.ts): `found` says what passed the limit. */
  bodyLimitExceeded: (limit: string, allowed: number, found: string) =>
    new ServiceError('QueryLimitExceeded', `${limit} is ${allowed}; ${found}. Send it in several requests.`, { target: limit }),
  payloadTooLarge: (limit: number) =>
    new ServiceError('PayloadTooLarge', `The request body is larger than ApiOptions:MaxBodyBytes (${limit} bytes).`),
  preconditionFailed: () =>
    new ServiceError('PreconditionFailed', 'The entity was changed since it was read: If-Match does not match its ETag.'),
  noneMatchFailed: () =>
    new ServiceError('PreconditionFailed', 'If-None-Match matches the ETag of the entity (or is *, and the entity exists): nothing was changed.'),
  conflict: (message: string, target?: string) => new ServiceError('Conflict', message, { target }),
  databaseUnavailable: () =>
    new ServiceError('ServiceUnavailable', 'The database is not reachable; try again shortly.', { headers: retryAfter(RETRY_UNAVAILABLE_SECONDS) }),
  /** The database refused for want of a resource (disk, memory) or failed at the system level (an I/O error). */
  databaseStrained: (sqlState: string) =>
    new ServiceError('ServiceUnavailable', `The database cannot serve this request now (SQLSTATE ${sqlState}: out of disk space, memory or another resource, or a system error); nothing of it was saved. Try again later.`, {
      headers: retryAfter(RETRY_UNAVAILABLE_SECONDS),
    }),
  /** The tenant's schema is not the one this server's plugins make: migrated while it ran. */
  schemaChanged: () =>
    new ServiceError('ServiceUnavailable', "This server cannot serve the request: the tenant's schema was changed by a migration under it (plugins other than its own); try again shortly.", {
      headers: retryAfter(RETRY_UNAVAILABLE_SECONDS),
    }),
  /** Every connection of the tenant stayed busy for Database:AcquireTimeoutSeconds. */
  noConnection: (seconds?: number) =>
    new ServiceError('ServiceUnavailable', `No database connection of this tenant became free within ${seconds === undefined ? 'Database:AcquireTimeoutSeconds' : `${seconds} s (Database:AcquireTimeoutSeconds)`}; try again shortly.`, {
      headers: retryAfter(RETRY_BUSY_SECONDS),
    }),
  queryTimeout: () =>
    new ServiceError(
      'QueryTimeout',
      'The query ran longer than ApiOptions:QueryTimeoutSeconds and was cancelled; narrow it ($filter, $top, fewer $expand or $count) or try again when the service is less busy.',
      { headers: retryAfter(RETRY_BUSY_SECONDS) },
    ),
}

/**
 * A plugin's rule or method failed the server, not the client: `what` names it as the plugin
 * declared it (`method Order.Close`, `computed Order.Total`). 500, so no client retries a bug.
 */
export const PluginError = {
  timedOut: (what: string, ms: number) =>
    new ServiceError('PluginFailed', `The plugin's ${what} did not finish within ApiOptions:PluginTimeoutSeconds (${ms / 1000} s); the request was undone.`),
  fault: (what: string, problem: string, cause?: unknown) => new ServiceError('PluginFailed', `The plugin's ${what} ${problem}.`, { cause }),
}

/**
 * What a plugin's method answers the client on purpose (rules/method-context.ts). A refusal is
 * the business declining the call as sent, on the data as it is: a 400 like a failed
 * validation (which also judges state: "A closed order cannot be changed"), not a 409, which
 * here means the data changed under the request or a key is taken, and tells a client that
 * trying again may succeed.
 */
export const MethodError = {
  refused: (message: string, target?: string) => new ServiceError('MethodRefused', message, { target }),
  /** A Guid the caller gave in `parameter` (as the caller names it) that no entity of `target` has. */
  namesNoEntity: (parameter: string, target: string, key: string) =>
    new ServiceError('InvalidParameter', `The parameter '${parameter}' names no ${target} with the Guid ${key}.`, { target: parameter }),
  /** A read method (function) changed, created or deleted an entity. */
  readOnly: () => new ServiceError('Forbidden', 'A read method cannot change data; declare it with method.modify to write.'),
}

/** Retry-After of a lost or refused database connection: long enough for a restart or failover to begin. */
const RETRY_UNAVAILABLE_SECONDS = 5
/** Retry-After when the service was busy (no free connection, a statement out of time). */
const RETRY_BUSY_SECONDS = 2

function retryAfter(seconds: number): Record<string, string> {
  return { 'Retry-After': String(seconds) }
}

export const AuthError = {
  /** The same answer whatever was wrong, so a caller learns nothing about which part. */
  invalidCredentials: () => unauthorized('Sign-in failed: unknown tenant, user or password.'),
  missingCredentials: () => unauthorized('This endpoint requires authentication: send a Bearer token or a PAT.'),
  invalidToken: (why: string) => unauthorized(`The access token is not valid: ${why}.`),
  invalidRefreshToken: () => unauthorized('The refresh token is not valid, expired or already used.'),
  forbidden: (message: string) => new ServiceError('Forbidden', message),
  /**
   * A sign-in the throttle refused (auth/sign-in-throttle.ts): `limit` is the key of the limit
   * that refused it, also its target, so a client, the log and the metrics can tell a locked
   * user name from a locked address or tenant. Its value is not said.
   */
  throttled: (limit: ThrottleLimit, retryAfterSeconds: number) =>
    new ServiceError('TooManyRequests', `Too many failed sign-ins ${THROTTLED_WHOM[limit]} (${limit} within SignIn:WindowSeconds); try again in ${retryAfterSeconds} s.`, {
      target: limit,
      headers: retryAfter(retryAfterSeconds),
    }),
}

export type ThrottleLimit = 'SignIn:MaxFailures' | 'SignIn:MaxFailuresPerAddress' | 'SignIn:MaxFailuresPerTenant'

const THROTTLED_WHOM: Record<ThrottleLimit, string> = {
  'SignIn:MaxFailures': 'of this user name',
  'SignIn:MaxFailuresPerAddress': 'from this client address',
  'SignIn:MaxFailuresPerTenant': 'to this tenant',
}

function unauthorized(message: string): ServiceError {
  return new ServiceError('Unauthorized', message, {
    headers: { 'WWW-Authenticate': 'Bearer realm="entityctl", Basic realm="entityctl"' },
  })
}

export function validationFailed(details: readonly ErrorDetail[]): ServiceError {
  const listed = details.slice(0, ERROR_BOUNDS.maxDetails).map(boundedDetail)
  const summary = listed.map((d) => (d.target ? `${d.target}: ${d.message}` : d.message)).join('; ')
  const more = details.length - listed.length
  return new ServiceError('ValidationFailed', `Validation failed: ${summary}${more > 0 ? `; and ${more} more` : ''}`, { details })
}
