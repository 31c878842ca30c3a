// POST /api/$batch (OData 4.01 Part 1 §11.7): the requests of a batch, JSON or multipart, each
// run through the same stages and handlers as the request alone (dispatch in odata-routes.ts
// with a PartExchange): bound, authorized, limited and planned exactly as it would be alone, so
// a part the caller may not do fails alone. Requests run in the order sent. An atomicity group
// (a multipart change set) runs on one transaction: every part's plan is applied on it, and it
// commits when all succeed; the first failure rolls the group back and fails all its requests
// (JSON: each answered, the others 424; multipart: the change set answered once, by its error).
// `$<id>` at the start of a URL, or as an `@odata.bind` value, stands for the entity that
// request <id> created; `dependsOn` (JSON) names requests or groups that must have succeeded,
// else 424. Above ApiOptions:MaxBatchRequests parts, the batch is refused before any runs.
// The answer's form is the one $format, else Accept, asks for (negotiate.ts negotiateBatch).
//
// In a workflow (Workflow-Id on the batch), the batch is ONE request of the workflow: it takes
// one Workflow-Index, its parts run on the workflow's session, and its plans are stored together.
// A failing atomicity group there fails the whole batch request (its error is the answer), so
// the workflow stays as it was: a workflow has no partial requests.

import { randomBytes } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { RequestError, ServiceError } from '../../errors.ts'
import { errorBody } from '../../http/error-boundary.ts'
import { refuseUnusableBody } from '../../http/json-body.ts'
import { refuseAsAlone } from '../../http/odata-headers.ts'
import { addressesProperty } from './property-paths.ts'
import type { ApiState } from '../../http/api-state.ts'
import { quotesUrl } from '../../http/logged-url.ts'
import { databaseCause, metAnotherWrite, translateDatabaseError } from '../../persistence/database-errors.ts'
import { atomically } from '../../persistence/session.ts'
import { WorkflowError } from '../../workflows/workflow-errors.ts'
import { WorkflowSession } from '../../workflows/workflow-session.ts'
import { multipartBoundary, parseJsonBatch, parseMultipartBatch, type BatchPart, type BatchRequest } from '../parser/batch-parser.ts'
import { serviceRoot } from '../serializer/urls.ts'
import { PartExchange } from './batch-part-exchange.ts'
import type { ApiContext, Exchange } from './exchange.ts'
import type { OdataServices } from './odata-services.ts'
import { formatOption, negotiateBatch, type BatchForm } from './negotiate.ts'
import { parseReadOptions } from './read-handler.ts'
import { boundProperty } from '../write/control-information.ts'

type Dispatch = (exchange: Exchange, services: OdataServices) => Promise<void>

/** What the requests so far created, answered and which failed, to go back to when a group is undone. */
interface Progress {
  readonly created: ReadonlyMap<string, string>
  readonly failed: ReadonlySet<string>
  readonly etags: ReadonlyMap<string, string>
}

interface PartAnswer {
  readonly part: BatchPart
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly type: string
  readonly body: string
  /** It failed only because a concurrent write changed its rows first: worth running again. */
  readonly lostToAnotherWrite?: boolean
  /** A request of a failed atomicity group that did not fail itself: answered 424 in JSON, left out of a multipart answer. */
  readonly undone?: true
}

/**
 * Attempts of an atomicity group that lost to concurrent writes. The optimistic ones run side by
 * side; after them a group takes turns with the other groups that lost as often (an advisory
 * lock held by its transaction), as a write alone locks its rows after three losses. Without
 * this, twenty UI5 clients editing lines of one order each in a change set got twelve 409s for
 * writes that alone all succeed.
 */
const OPTIMISTIC_GROUP_ATTEMPTS = 3
const MAX_GROUP_ATTEMPTS = 10
/** pg_advisory_xact_lock key: "ectl-bg" as a number; nothing else of entityctl takes it. */
const CONTENDED_GROUPS_LOCK = 0x6563_746c_6267

export async function handleBatch(ctx: ApiContext, services: OdataServices, dispatch: Dispatch): Promise<void> {
  if (ctx.method !== 'POST') throw RequestError.methodNotAllowed(ctx.method, ctx.path, ['POST'])
  // The batch reads only $format of its query, but its query is checked as any route's: a
  // $format given twice is refused, not read by its first (formatOption reads one).
  parseReadOptions(ctx.querystring, services.config.ApiOptions.MaxNodeCount)
  const batch = await readBatch(ctx, services)
  const max = services.config.ApiOptions.MaxBatchRequests
  if (batch.parts.length > max) throw RequestError.bodyLimitExceeded('ApiOptions:MaxBatchRequests', max, `the batch holds ${batch.parts.length} requests`)
  checkReferences(batch)
  const form = negotiateBatch(ctx.get('Accept'), batch.form, formatOption(ctx.querystring))
  const answers = await new BatchRun(ctx, services, dispatch, batch.parts).run(batch.parts)
  // Requests after a failed one always run (a failed atomicity group ends only itself): say so when asked.
  const continueOnError = continueOnErrorPreference(ctx.get('Prefer'))
  if (continueOnError) ctx.set('Preference-Applied', continueOnError)
  if (form === 'json') {
    ctx.type = 'application/json'
    ctx.body = jsonAnswer(answers, batch.form)
  } else {
    const boundary = `batchresponse_${randomBytes(12).toString('hex')}`
    ctx.type = `multipart/mixed; boundary=${boundary}`
    ctx.body = multipartAnswer(answers, batch.form, boundary)
  }
}

async function readBatch(ctx: ApiContext, services: OdataServices): Promise<BatchRequest> {
  const type = ctx.get('Content-Type')
  const boundary = multipartBoundary(type)
  if (boundary) {
    const batch = parseMultipartBatch(await readText(ctx, services.config.ApiOptions.MaxBodyBytes), boundary)
    // What json-body.ts refuses in a JSON body (the JSON form's was read through it).
    for (const part of batch.parts) refuseUnusableBody(part.body)
    return batch
  }
  if (/^\s*application\/json\b/i.test(type)) return parseJsonBatch((ctx.request as { body?: unknown }).body)
  throw new ServiceError('UnsupportedMediaType', `A $batch is application/json or multipart/mixed (with a boundary), not '${type}'.`)
}

async function readText(ctx: ApiContext, limit: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of ctx.req) {
    size += chunk.length
    if (size > limit) throw RequestError.payloadTooLarge(limit)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * `Prefer: odata.continue-on-error` (4.0), `continue-on-error` (4.01 names it without the prefix),
 * or either `=true`: the preference as it is applied, named as the client named it. Undefined
 * when absent or `=false`, which asks to stop at the first error: not what the service does.
 */
function continueOnErrorPreference(prefer: string): string | undefined {
  for (const preference of prefer.split(',')) {
    const match = /^\s*((?:odata\.)?continue-on-error)\s*(?:=\s*"?(true|false)"?)?\s*$/i.exec(preference)
    if (match) return match[2]?.toLowerCase() === 'false' ? undefined : match[1]
  }
  return undefined
}

/**
 * Ids are unique (in a multipart batch, within their change set, as OData 4.0 asks: a client
 * may number each change set from 1 again); no group has a request's id (JSON 4.01 §19.1), so
 * that dependsOn names one or the other; dependsOn names earlier requests or groups; a group
 * is sent in one piece.
 */
function checkReferences(batch: BatchRequest): void {
  const { parts, form } = batch
  const ids = new Set(parts.map((part) => part.id))
  const named = parts.find((part) => part.atomicityGroup !== undefined && ids.has(part.atomicityGroup))
  if (named) throw RequestError.invalid(`The atomicity group '${named.atomicityGroup}' has the name of a request of the batch; name it otherwise (JSON 4.01 §19.1), so that dependsOn tells them apart.`)
  const seen = new Set<string>()
  const unique = new Set<string>()
  const groups = new Set<string>()
  let previousGroup: string | undefined
  for (const part of parts) {
    const scoped = form === 'multipart' ? `${part.atomicityGroup ?? ''}\u0000${part.id}` : part.id
    if (unique.has(scoped)) throw RequestError.invalid(`Two requests of the batch have the id '${part.id}'.`)
    unique.add(scoped)
    for (const dependency of part.dependsOn) {
      if (!seen.has(dependency) && !groups.has(dependency)) throw RequestError.invalid(`Request '${part.id}' depends on '${dependency}', which is not an earlier request or atomicity group of the batch.`)
    }
    if (part.atomicityGroup !== previousGroup && part.atomicityGroup && groups.has(part.atomicityGroup)) {
      throw RequestError.invalid(`The requests of atomicity group '${part.atomicityGroup}' are not adjacent.`)
    }
    seen.add(part.id)
    if (part.atomicityGroup) groups.add(part.atomicityGroup)
    previousGroup = part.atomicityGroup
  }
}

class BatchRun {
  readonly #ctx: ApiContext
  readonly #services: OdataServices
  readonly #dispatch: Dispatch
  /** Resource paths of the entities created, by request id, for `$<id>` references. */
  readonly #created = new Map<string, string>()
  /** The ids of the batch's requests: `$<id>` names one of them, `$metadata` does not. */
  readonly #ids: ReadonlySet<string>
  /** Requests and groups that failed, for dependsOn. */
  readonly #failed = new Set<string>()
  /** The ETag each request answered with, for an `If-Match: $<id>` of a later one. */
  readonly #etags = new Map<string, string>()
  /**
   * Bytes of the answers so far. ApiOptions:MaxResponseBytes bounds the batch's answer, the
   * sum of its requests' (each within it alone): 100 reads of 4.8 MB made one answer of 480 MB,
   * 2.6 GB of memory and the event loop held for 11 s. A read past it answers 400 in its place.
   */
  #answerBytes = 0

  constructor(ctx: ApiContext, services: OdataServices, dispatch: Dispatch, parts: readonly BatchPart[]) {
    this.#ctx = ctx
    this.#ids = new Set(parts.map((part) => part.id))
    this.#services = services
    this.#dispatch = dispatch
  }

  async run(parts: readonly BatchPart[]): Promise<PartAnswer[]> {
    const answers: PartAnswer[] = []
    for (let start = 0; start < parts.length; ) {
      const group = parts[start].atomicityGroup
      let end = start + 1
      if (group) while (end < parts.length && parts[end].atomicityGroup === group) end++
      const unit = parts.slice(start, end)
      answers.push(...(group ? await this.#runGroup(group, unit) : [await this.#runPart(unit[0], this.#ctx.state)]))
      start = end
    }
    return answers
  }

  /** All or nothing on one transaction; a failure fails every request of the group (#failedGroup). */
  async #runGroup(group: string, parts: readonly BatchPart[]): Promise<PartAnswer[]> {
    const state = this.#ctx.state
    if (state.session) {
      // Inside a workflow: its session is the transaction; a failure fails the batch request.
      const answers: PartAnswer[] = []
      for (const part of parts) {
        const answer = await this.#runPart(part, state, true)
        answers.push(answer)
      }
      return answers
    }
    const tenant = state.tenant!
    const before = this.#progress()
    let session: WorkflowSession | undefined
    type Outcome = { answers: PartAnswer[] } | { failed: PartAnswer }
    let outcome: Outcome
    for (let attempt = 1; ; attempt++) {
      // As a write alone does (persistence/session.ts): losers spread out, then take turns.
      if (attempt > 1) await delay(Math.random() * Math.min(2 ** attempt, 100))
      const takingTurns = attempt > OPTIMISTIC_GROUP_ATTEMPTS
      outcome = await atomically<Outcome>(tenant, { signal: state.signal }, async (sql) => {
        if (takingTurns) await sql('select pg_advisory_xact_lock($1)', [CONTENDED_GROUPS_LOCK])
        session = new WorkflowSession(tenant, sql)
        const answers: PartAnswer[] = []
        for (const part of parts) {
          const answer = await this.#runPart(part, state.inSession(session))
          if (answer.status >= 400) return { commit: false, value: { failed: answer } }
          answers.push(answer)
        }
        return { commit: true, value: { answers } }
      })
      if (!('failed' in outcome) || !outcome.failed.lostToAnotherWrite || attempt === MAX_GROUP_ATTEMPTS) break
      // Nothing of this attempt was written: forget what its parts did, and run the group again.
      this.#restore(before)
    }
    if ('failed' in outcome) {
      this.#restore(before)
      this.#failed.add(group)
      for (const part of parts) this.#failed.add(part.id)
      return this.#failedGroup(group, parts, outcome.failed)
    }
    // Its parts ran on a session of the group's, which (as a workflow's) does not tell the access cache: told once committed.
    if (session?.plans.some((plan) => plan.operations.some((operation) => this.#services.model.entities.get(operation.entity)?.system))) {
      await this.#services.access.changed(tenant)
    }
    return outcome.answers
  }

  /**
   * A failed group answers each of its requests, with its id and group (OData JSON 4.01 §19.4,
   * §19.5: "all requests within that atomicity group are considered failed"): the one that
   * failed with its error, the others 424, as §19.5 allows for those that "fail or are not
   * attempted due to other failures within the same atomicity group". Those that ran were rolled
   * back: their success answer (a Location, an ETag) would name what does not exist. The
   * multipart form answers the change set once, with the failed request's error (multipartAnswer).
   */
  #failedGroup(group: string, parts: readonly BatchPart[], failed: PartAnswer): PartAnswer[] {
    return parts.map((part): PartAnswer => {
      if (part === failed.part) return namingItsRequest(failed)
      const error = new ServiceError('FailedDependency', `Request '${part.id}' of atomicity group '${group}' was not applied: request '${failed.part.id}' of the group failed, and a group's requests succeed or fail together.`)
      return { ...this.#failure(part, error), undone: true }
    })
  }

  /** Where the batch stands now (Progress). */
  #progress(): Progress {
    return { created: new Map(this.#created), failed: new Set(this.#failed), etags: new Map(this.#etags) }
  }

  #restore(progress: Progress): void {
    this.#created.clear()
    for (const [id, path] of progress.created) this.#created.set(id, path)
    this.#etags.clear()
    for (const [id, etag] of progress.etags) this.#etags.set(id, etag)
    this.#failed.clear()
    for (const id of progress.failed) this.#failed.add(id)
  }

  async #runPart(part: BatchPart, state: ApiState, failsTheBatch = false): Promise<PartAnswer> {
    const failedDependency = part.dependsOn.find((id) => this.#failed.has(id))
    if (failedDependency) {
      const error = new ServiceError('FailedDependency', `Request '${part.id}' depends on '${failedDependency}', which failed.`)
      // Inside a workflow a group's parts run on its session as they come: only a throw undoes those before.
      if (failsTheBatch) throw error
      this.#failed.add(part.id)
      return this.#failure(part, error)
    }
    if (part.condition !== undefined) {
      // OData JSON 4.01 §19.1: a service that does not evaluate `if` fails the request with 424
      // rather than run it: the client wanted it run only when its condition held.
      const error = new ServiceError('FailedDependency', `Request '${part.id}' has an "if" condition, which this service does not evaluate; the request was not run (send it without "if", after reading what the condition tests).`)
      if (failsTheBatch) throw error
      this.#failed.add(part.id)
      return this.#failure(part, error)
    }
    let exchange: PartExchange
    try {
      const { path, querystring } = this.#resolveUrl(part.url)
      refuseAsAlone({ method: part.method, get: (name) => part.headers[name.toLowerCase()] ?? '' }, part.body !== undefined, () => addressesProperty(this.#services, path))
      this.#refuseOtherWorkflow(part)
      exchange = new PartExchange(this.#ctx, state, part.method, path, querystring, this.#resolveETags(part.headers), this.#resolveBinds(part.body))
      await this.#dispatch(exchange, this.#services)
    } catch (thrown) {
      const error = thrown instanceof ServiceError ? thrown : translateDatabaseError(thrown)
      if (!error) {
        state.log.error({ ...state.who, err: thrown, part: part.id }, 'unhandled error in a $batch request')
        if (failsTheBatch) throw thrown
        this.#failed.add(part.id)
        return this.#failure(part, new ServiceError('InternalError', `An internal error occurred; quote request id ${state.requestId} when reporting it.`))
      }
      // As for a request alone (http/error-boundary.ts): a 500 is the operator's to fix (a
      // plugin's bug, with where it threw), what the database said is the operator's to read.
      // Its message may quote the part's URL, also where the error boundary logs it.
      quotesUrl(error, part.url)
      const message = state.loggedMessage(error, part.url)
      if (error.status === 500) {
        state.log.error({ ...state.who, part: part.id, status: error.status, code: error.code, message, err: error.cause }, 'request failed')
      } else if (error !== thrown && error.status >= 500) {
        state.log.warn({ ...state.who, part: part.id, status: error.status, code: error.code, message, cause: databaseCause(thrown) }, 'request refused: the database failed it')
      } else if (error.status >= 500) {
        state.log.warn({ ...state.who, part: part.id, status: error.status, code: error.code, message }, 'request refused: the service could not serve it')
      }
      if (failsTheBatch) throw error
      this.#failed.add(part.id)
      return { ...this.#failure(part, error), lostToAnotherWrite: metAnotherWrite(thrown) }
    }
    if (!exchange.headers.has('OData-Version')) exchange.set('OData-Version', this.#version())
    const location = exchange.headers.get('Location')
    if (location) this.#created.set(part.id, location.slice(serviceRoot(this.#ctx, this.#services).length))
    const etag = exchange.headers.get('ETag')
    if (etag) this.#etags.set(part.id, etag)
    const text = await exchange.text()
    const type = exchange.type || (text ? 'application/json' : '')
    // As HTTP answers a HEAD alone: the GET's status and headers, no body.
    const body = part.method === 'HEAD' ? '' : text
    // Bytes, as a read alone counts them (PostgreSQL's octet_length), not UTF-16 code units.
    const answerBytes = this.#answerBytes + Buffer.byteLength(body)
    const maxBytes = this.#services.config.ApiOptions.MaxResponseBytes
    // A write's answer stays (what it did is done, and says so); a read's is dropped.
    if (answerBytes > maxBytes && (part.method === 'GET' || part.method === 'HEAD')) {
      this.#etags.delete(part.id)
      const error = new ServiceError(
        'QueryLimitExceeded',
        `MaxResponseBytes is ${maxBytes}; with the answer to request '${part.id}' the answers of this batch would be longer. Send fewer reads per batch, or smaller pages ($top, $select).`,
        { target: 'MaxResponseBytes' },
      )
      if (failsTheBatch) throw error
      this.#failed.add(part.id)
      return this.#failure(part, error)
    }
    this.#answerBytes = answerBytes
    return { part, status: exchange.status, headers: exchange.headers, type, body }
  }

  /**
   * The batch is the workflow's request (workflow-routes.ts), or none: a request of it naming
   * a workflow would run outside it, done for good. Repeating the batch's own headers, as a
   * client setting them for every request does, is harmless.
   */
  #refuseOtherWorkflow(part: BatchPart): void {
    for (const name of ['workflow-id', 'workflow-index']) {
      const given = part.headers[name]?.trim()
      if (given && given.toLowerCase() !== this.#ctx.get(name).trim().toLowerCase()) throw WorkflowError.inBatchPart()
    }
  }

  /**
   * The OData-Version every answer of the batch names, failed ones too, as the request alone
   * would be answered (UI5 checks it per part): the batch's, which its OData-MaxVersion chose
   * (http/odata-headers.ts).
   */
  #version(): string {
    return String(this.#ctx.response.get('OData-Version') || '4.0')
  }

  #failure(part: BatchPart, error: ServiceError): PartAnswer {
    const headers = new Map(Object.entries(error.headers))
    headers.set('OData-Version', this.#version())
    return { part, status: error.status, headers, type: 'application/json', body: JSON.stringify({ error: errorBody(error) }) }
  }

  /** The part's URL as a path under /api/ and its query string. */
  #resolveUrl(url: string): { path: string; querystring: string } {
    let resolved = url
    const reference = /^\$([^/?]+)/.exec(url)
    if (reference && this.#ids.has(reference[1])) {
      const target = this.#created.get(reference[1])
      if (!target) throw RequestError.invalid(`'$${reference[1]}' names no entity created by an earlier request of the batch (it failed, created nothing, or comes later).`)
      resolved = target + url.slice(reference[0].length)
    }
    if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(resolved)) {
      // An absolute URL names its service, as an @odata.bind's does (bind-body.ts keyFromBinding):
      // another host's Orders are not ours to serve, whatever its path says.
      const root = serviceRoot(this.#ctx, this.#services).slice(0, -1)
      const rest = resolved.slice(root.length)
      if (resolved.slice(0, root.length).toLowerCase() !== root.toLowerCase() || !/^([/?]|$)/.test(rest)) {
        throw RequestError.invalid(`A $batch request's absolute URL must start with this service's root ${root}/, not '${url}'.`)
      }
      resolved = `/api${rest}`
    }
    if (!resolved.startsWith('/')) resolved = `/api/${resolved}`
    if (!/^\/api([/?]|$)/i.test(resolved)) throw RequestError.invalid(`A $batch request's URL is under the service root /api/, not '${url}'.`)
    const question = resolved.indexOf('?')
    return question < 0 ? { path: resolved, querystring: '' } : { path: resolved.slice(0, question), querystring: resolved.slice(question + 1) }
  }

  /**
   * `If-Match: $1` (or If-None-Match): the ETag request 1 answered with, as OData JSON 4.01 §19.3
   * lets a request refer to it, so a change applies only to the entity as an earlier request read it.
   */
  #resolveETags(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    const resolved = { ...headers }
    for (const name of ['if-match', 'if-none-match']) {
      const reference = /^\s*\$([^\s,]+)\s*$/.exec(headers[name] ?? '')
      if (!reference || !this.#ids.has(reference[1])) continue
      const etag = this.#etags.get(reference[1])
      if (!etag) throw RequestError.invalid(`${name} '$${reference[1]}' names no ETag: request '${reference[1]}' answered without one (it failed, answered no entity, or comes later).`, name)
      resolved[name] = etag
    }
    return resolved
  }

  /** `"Order@odata.bind": "$1"` (4.01 `"Order@bind"`; or an entity reference's `"@odata.id": "$1"`, 4.01 `"@id"`) → the entity request 1 created, in the body and its nested entities. */
  #resolveBinds(body: unknown): unknown {
    if (Array.isArray(body)) return body.map((item) => this.#resolveBinds(item))
    if (!body || typeof body !== 'object') return body
    const resolved: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      if (boundProperty(name) !== undefined || name === '@odata.id' || name === '@id') resolved[name] = Array.isArray(value) ? value.map((v) => this.#resolveReference(v)) : this.#resolveReference(value)
      else resolved[name] = value !== null && typeof value === 'object' ? this.#resolveBinds(value) : value
    }
    return resolved
  }

  #resolveReference(value: unknown): unknown {
    if (typeof value !== 'string' || !value.startsWith('$') || !this.#ids.has(value.slice(1))) return value
    const target = this.#created.get(value.slice(1))
    if (!target) throw RequestError.invalid(`'${value}' names no entity created by an earlier request of the batch.`)
    return target
  }
}

/**
 * A failed change set is answered once for all its requests (multipartAnswer), so
 * its error names the request that failed by Content-ID (`@Core.ContentID`, on the error and
 * each detail): clients such as SAPUI5 attach the messages to that request's row.
 */
function namingItsRequest(failed: PartAnswer): PartAnswer {
  const contentId = failed.part.contentId
  if (!contentId || !/json/i.test(failed.type)) return failed
  const { error } = JSON.parse(failed.body) as { error: { details?: Record<string, unknown>[] } }
  const named = { ...error, '@Core.ContentID': contentId, ...(error.details ? { details: error.details.map((detail) => ({ ...detail, '@Core.ContentID': contentId })) } : {}) }
  return { ...failed, body: JSON.stringify({ error: named }) }
}

/**
 * The id a request is answered with, in either form: a JSON request's `id`, a multipart part's
 * Content-ID. A multipart part sent without one has none to answer with: its answers' order
 * tells it (JSON 4.01 §19.5; its id here is its position, for the batch's own bookkeeping).
 */
function answerId(part: BatchPart, requestForm: BatchForm): string | undefined {
  return requestForm === 'json' ? part.id : part.contentId
}

/**
 * A JSON body goes in as the request alone wrote it, never parsed again: JSON.parse would make
 * its numbers doubles, and a decimal of more than 15 digits would come out rounded. A multipart
 * batch answered in JSON keeps its order, its Content-IDs as ids and each change set as an
 * atomicity group (JSON 4.01 §19.5).
 */
function jsonAnswer(answers: readonly PartAnswer[], requestForm: BatchForm): string {
  const responses = answers.map(({ part, status, headers, type, body }) => {
    const headerObject: Record<string, string> = {}
    for (const [name, value] of headers) headerObject[name.toLowerCase()] = value
    if (type) headerObject['content-type'] = type
    const id = answerId(part, requestForm)
    const head = JSON.stringify({ ...(id !== undefined ? { id } : {}), ...(part.atomicityGroup ? { atomicityGroup: part.atomicityGroup } : {}), status, headers: headerObject })
    if (!body) return head
    return `${head.slice(0, -1)},"body":${/json/i.test(type) ? body : JSON.stringify(body)}}`
  })
  return `{"responses":[${responses.join(',')}]}`
}

/**
 * Multipart answers (Protocol 4.01 §11.7.7, Multipart Batch Response): a change set's answers in
 * a change set of their own; a failed change set as the answer of the request that failed,
 * application/http in the batch itself ("not represented using the multipart/mixed media type.
 * Instead, a single response … that applies to all requests in the change set"), which clients
 * such as SAPUI5 read as the answer to every request of the set.
 */
function multipartAnswer(answers: readonly PartAnswer[], requestForm: BatchForm, boundary: string): string {
  const out: string[] = []
  for (let index = 0; index < answers.length; ) {
    const group = answers[index].part.atomicityGroup
    let end = index + 1
    if (group) while (end < answers.length && answers[end].part.atomicityGroup === group) end++
    const failed = group ? answers.slice(index, end).find((answer) => answer.status >= 400 && !answer.undone) : undefined
    if (!group || failed) {
      out.push(`--${boundary}\r\n${httpAnswer(failed ?? answers[index], requestForm)}`)
    } else {
      const changeSet = `changesetresponse_${randomBytes(12).toString('hex')}`
      out.push(`--${boundary}\r\nContent-Type: multipart/mixed; boundary=${changeSet}\r\n\r\n`)
      for (const answer of answers.slice(index, end)) out.push(`--${changeSet}\r\n${httpAnswer(answer, requestForm)}`)
      out.push(`--${changeSet}--\r\n`)
    }
    index = end
  }
  out.push(`--${boundary}--\r\n`)
  return out.join('')
}

function httpAnswer(answer: PartAnswer, requestForm: BatchForm): string {
  const { part, status, headers, type, body } = answer
  const lines = ['Content-Type: application/http', 'Content-Transfer-Encoding: binary']
  const id = answerId(part, requestForm)
  if (id) lines.push(`Content-ID: ${id}`)
  lines.push('', `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`.trimEnd())
  if (type) lines.push(`Content-Type: ${type}`)
  for (const [name, value] of headers) lines.push(`${name}: ${value}`)
  lines.push('', body)
  return `${lines.join('\r\n')}\r\n`
}
