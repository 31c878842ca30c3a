// What each stage of a request finds on ctx.state, filled in pipeline order:
// request-log → client-disconnect → error-boundary → authenticate → (handler).

import type { Level, Logger } from 'pino'
import type { AccessContext } from '../auth/access-context.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import type { Session } from '../persistence/session.ts'
import { loggedMessage, loggedUrl, urlQuotedBy } from './logged-url.ts'

export class ApiState {
  readonly requestId: string
  /** Reads the JSON body; authenticate() calls it once the credentials are accepted (http/json-body.ts). */
  readBody?: () => Promise<void>
  /** Set by authenticate(); absent on sign-in and refresh. */
  access?: AccessContext
  /** Set by authenticate() as soon as the credentials name a tenant the server serves, before `access`; by sign-in and refresh for the tenant they name, if served. */
  tenant?: TenantDatabase
  /** Set by a workflow to run the request inside it; otherwise the tenant's pool session. */
  session?: Session
  /** The workflow and index the request names (workflows/workflow-routes.ts), for its log line. */
  workflow?: { readonly id: string; readonly index?: number }
  /** Aborted when the client goes away before its answer (client-disconnect.ts). */
  signal?: AbortSignal
  readonly #root: Logger
  #log?: Logger
  /** Server:LogQueryValues: whether log lines may show the values a URL holds. */
  readonly #logsQueryValues: boolean

  constructor(requestId: string, root: Logger, logsQueryValues = false) {
    this.requestId = requestId
    this.#root = root
    this.#logsQueryValues = logsQueryValues
  }

  /** `url` as log lines show it: its values replaced by `?` unless Server:LogQueryValues (logged-url.ts). */
  loggedUrl(url: string): string {
    return this.#logsQueryValues ? url : loggedUrl(url)
  }

  /** An error's message as log lines show it: without the values of the request's `url` (or the $batch request's it came from), unless Server:LogQueryValues. */
  loggedMessage(error: Error, url: string): string {
    return this.#logsQueryValues ? error.message : loggedMessage(error.message, urlQuotedBy(error, url))
  }

  /**
   * The request's logger: its lines carry the request id. Made on first use, because most
   * requests only write their one request line, and a pino child per request was a
   * noticeable share of a key lookup's CPU.
   */
  get log(): Logger {
    return (this.#log ??= this.#root.child({ requestId: this.requestId }))
  }

  /**
   * Whom the request is for, on its log lines: the tenant once its credentials or sign-in name
   * one the server serves, the user (and PAT) once authenticated.
   */
  get who(): { tenant?: string; user?: string; pat?: string } {
    const access = this.access
    return { tenant: this.tenant?.tenant ?? access?.tenant, user: access?.username, pat: access?.patId }
  }

  /** Whether lines of `level` are written at all: ask before building an expensive one. */
  logs(level: Level): boolean {
    return this.#root.isLevelEnabled(level)
  }

  /** The same request, user and tenant, run on `session` (a workflow replaying it). */
  inSession(session: Session): ApiState {
    const state = new ApiState(this.requestId, this.#root, this.#logsQueryValues)
    state.access = this.access
    state.tenant = this.tenant
    state.session = session
    state.signal = this.signal
    return state
  }
}
