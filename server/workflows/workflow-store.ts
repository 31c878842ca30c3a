// The workflow's rows in the tenant database (persistence/internal-tables.ts): the workflow
// itself (owner, expiry, last accepted index) and each accepted request, kept so its write
// plans can be applied again identically and, for the last one, its answer given again. Plain
// parameterised SQL, run by whoever holds the connection: the workflow's transaction, or the pool.
//
// A request's plans are stored in its "Body" column, versioned, with the rows they wrote:
// { "format": 1, "plans": [ … ], "rows": [ … ] } (writes/write-plan.ts, FlushedRow of
// persistence/unit-of-work.ts). A request stored otherwise (by a version of entityctl that
// replayed HTTP requests, or a later format) is not guessed at: its workflow fails by name.

import type { Sql } from '../persistence/sql.ts'
import type { FlushedRow, WrittenRow } from '../persistence/unit-of-work.ts'
import { WRITE_PLAN_FORMAT, type WritePlan } from '../writes/write-plan.ts'
import { WorkflowError } from './workflow-errors.ts'

/** A row a request changed or deleted, with the row version it found: [entity, key, version]. */
export type Touch = WrittenRow

export interface WorkflowRow {
  readonly lastIndex: number
  readonly status: 'open' | 'committed'
  readonly expired: boolean
}

/** A request as it was first run: the plans it applied, and what it took from the world. */
export interface StoredRequest {
  readonly index: number
  readonly method: string
  /** Path with its query string, as sent (to name it, and to match a retry). */
  readonly path: string
  /** Its write plans, in the order it applied them. */
  readonly plans: readonly WritePlan[]
  /** The rows they wrote, in order, with their values. */
  readonly rows: readonly FlushedRow[]
  /** The clock of its rules. */
  readonly at: Date
  /** The Guids it generated, in order. */
  readonly guids: readonly string[]
  readonly touched: readonly Touch[]
}

export interface StoredAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | null
}

/** The access a request was answered with: what a safe retry's caller must still hold. */
export interface AnsweredAccess {
  readonly fullAccess: boolean
  /** Names of the responsibilities in effect. */
  readonly responsibilities: readonly string[]
}

/** Requests that change nothing are kept for the index and a safe retry, never replayed. */
const READ_METHODS = `('GET', 'HEAD')`

/** An open workflow, as a refused start names it so that its user can end it. */
export interface OpenWorkflow {
  readonly id: string
  /** ISO 8601, UTC, to the second. */
  readonly lastUsedAt: string
  readonly expiresAt: string
}

/**
 * pg_advisory_xact_lock(int, int) key space of workflow starts ("ecwf" as a number), the second
 * key the user's Guid hashed; nothing else of entityctl takes locks in it. Two users whose
 * Guids hash alike only take turns.
 */
const WORKFLOW_STARTS_LOCK = 0x6563_7766

/** Selects the open workflows of the user whose Guid is the parameter `userParam`. */
const openOfUser = (userParam: string) => `"UserGuid" = ${userParam}::uuid and "Status" = 'open' and "ExpiresAt" > now()`

const isoTime = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`

/**
 * Creates the workflow unless its user already holds `maxOpen` open ones (expired ones do not
 * count); then it creates nothing and returns those, stalest first. Run in a transaction: the
 * user's starts take turns from the count to the commit, else two starts at the last slot would
 * each count before the other's insert and both pass.
 */
export async function createWorkflow(
  sql: Sql,
  workflow: { readonly id: string; readonly userGuid: string; readonly idleMinutes: number; readonly maxOpen: number },
): Promise<{ created: true } | { created: false; open: OpenWorkflow[] }> {
  const { id, userGuid, idleMinutes, maxOpen } = workflow
  await sql('select pg_advisory_xact_lock($1, hashtext($2))', [WORKFLOW_STARTS_LOCK, userGuid])
  const inserted = await sql(
    `insert into "_Workflow" ("Id", "UserGuid", "ExpiresAt")
     select $1::uuid, $2::uuid, now() + make_interval(secs => $3::double precision)
      where (select count(*) from "_Workflow" where ${openOfUser('$2')}) < $4::int
     returning "Id"`,
    [id, userGuid, idleMinutes * 60, maxOpen],
  )
  if (inserted.length > 0) return { created: true }
  const open = await sql<OpenWorkflow>(
    `select "Id" as id, ${isoTime('"LastUsedAt"')} as "lastUsedAt", ${isoTime('"ExpiresAt"')} as "expiresAt"
       from "_Workflow" where ${openOfUser('$1')} order by "LastUsedAt", "Id"`,
    [userGuid],
  )
  return { created: false, open }
}

/** The workflow of this user, locked until the transaction ends: its requests run one at a time. */
export function lockWorkflow(sql: Sql, id: string, userGuid: string): Promise<WorkflowRow | undefined> {
  return readWorkflow(sql, id, userGuid, 'for update')
}

/** The workflow of this user as it stands, unlocked: to say why it cannot be aborted. */
export function findWorkflow(sql: Sql, id: string, userGuid: string): Promise<WorkflowRow | undefined> {
  return readWorkflow(sql, id, userGuid, '')
}

async function readWorkflow(sql: Sql, id: string, userGuid: string, lock: 'for update' | ''): Promise<WorkflowRow | undefined> {
  const [row] = await sql<{ LastIndex: number; Status: 'open' | 'committed'; Expired: boolean }>(
    `select "LastIndex", "Status", "ExpiresAt" <= now() as "Expired"
       from "_Workflow" where "Id" = $1 and "UserGuid" = $2 ${lock}`,
    [id, userGuid],
  )
  return row && { lastIndex: row.LastIndex, status: row.Status, expired: row.Expired }
}

/** The requests that change something, in order. */
export async function loadReplayable(sql: Sql, id: string): Promise<StoredRequest[]> {
  const rows = await sql<{
    Index: number
    Method: string
    Path: string
    Body: StoredBody | null
    At: number
    Guids: string[]
    Touched: Touch[]
  }>(
    `select "Index", "Method", "Path", "Body", (extract(epoch from "At") * 1000)::float8 as "At", "Guids", "Touched"
       from "_WorkflowRequest" where "WorkflowId" = $1 and "Method" not in ${READ_METHODS} order by "Index"`,
    [id],
  )
  return rows.map((row) => ({
    index: row.Index,
    method: row.Method,
    path: row.Path,
    ...storedPlans(id, row),
    at: new Date(row.At),
    guids: row.Guids,
    touched: row.Touched,
  }))
}

interface StoredBody {
  readonly format?: unknown
  readonly plans?: WritePlan[]
  readonly rows?: FlushedRow[]
}

function storedPlans(id: string, row: { Index: number; Method: string; Path: string; Body: StoredBody | null }): { plans: WritePlan[]; rows: FlushedRow[] } {
  const stored = row.Body
  if (!stored || stored.format !== WRITE_PLAN_FORMAT || !Array.isArray(stored.plans) || !Array.isArray(stored.rows)) {
    throw WorkflowError.storedOtherwise(id, { index: row.Index, method: row.Method, path: row.Path })
  }
  return { plans: stored.plans, rows: stored.rows }
}

/** The last accepted request, with its answer: what a safe retry compares and sends again. */
export async function loadAnswer(
  sql: Sql,
  id: string,
  index: number,
): Promise<{ method: string; path: string; answer: StoredAnswer; access: AnsweredAccess | null } | undefined> {
  const [row] = await sql<{
    Method: string
    Path: string
    ResponseStatus: number
    ResponseHeaders: Record<string, string> | null
    ResponseBody: string | null
    Access: AnsweredAccess | null
  }>(
    `select "Method", "Path", "ResponseStatus", "ResponseHeaders", "ResponseBody", "Access"
       from "_WorkflowRequest" where "WorkflowId" = $1 and "Index" = $2`,
    [id, index],
  )
  return (
    row && {
      method: row.Method,
      path: row.Path,
      answer: { status: row.ResponseStatus, headers: row.ResponseHeaders ?? {}, body: row.ResponseBody },
      access: row.Access,
    }
  )
}

/**
 * Accepts a request: stores it with its answer, forgets the answer of the one before (only
 * the last index can be retried), and moves the workflow's index and expiry on.
 */
export async function recordRequest(
  sql: Sql,
  id: string,
  request: StoredRequest,
  answer: StoredAnswer,
  access: AnsweredAccess,
  idleMinutes: number,
): Promise<void> {
  await sql(
    `insert into "_WorkflowRequest"
       ("WorkflowId", "Index", "Method", "Path", "Headers", "Body", "At", "Guids", "Touched", "ResponseStatus", "ResponseHeaders", "ResponseBody", "Access")
     values ($1, $2, $3, $4, $5, $6::json, $7, $8, $9, $10, $11, $12, $13)`,
    [
      id,
      request.index,
      request.method,
      request.path,
      '{}',
      JSON.stringify({ format: WRITE_PLAN_FORMAT, plans: request.plans, rows: request.rows }),
      request.at,
      JSON.stringify(request.guids),
      JSON.stringify(request.touched),
      answer.status,
      JSON.stringify(answer.headers),
      answer.body,
      JSON.stringify(access),
    ],
  )
  await sql(`update "_WorkflowRequest" set "ResponseHeaders" = null, "ResponseBody" = null where "WorkflowId" = $1 and "Index" = $2`, [
    id,
    request.index - 1,
  ])
  await touchWorkflow(sql, id, request.index, idleMinutes)
}

/**
 * After the commit's transaction saved everything: the requests go, the workflow stays as
 * 'committed' until it would have expired, so a retried commit gets its answer again.
 */
export async function markCommitted(sql: Sql, id: string, index: number, idleMinutes: number): Promise<void> {
  await sql(`delete from "_WorkflowRequest" where "WorkflowId" = $1`, [id])
  await sql(`update "_Workflow" set "Status" = 'committed' where "Id" = $1`, [id])
  await touchWorkflow(sql, id, index, idleMinutes)
}

/** Discards an open workflow of this user; false when there is none. */
export async function abortWorkflow(sql: Sql, id: string, userGuid: string): Promise<boolean> {
  const [row] = await sql<{ n: number }>(
    discard(`"Id" = $1 and "UserGuid" = $2 and "Status" = 'open' and "ExpiresAt" > now()`),
    [id, userGuid],
  )
  return row.n > 0
}

/** Deletes expired workflows (and committed ones past their retry window); returns how many. */
export async function purgeExpiredWorkflows(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }>(discard(`"ExpiresAt" <= now()`))
  return row.n
}

/** When the first workflow left expires (timestamptz text); null when none is left. */
export async function firstWorkflowExpiry(sql: Sql): Promise<string | null> {
  const [row] = await sql<{ next: string | null }>(`select min("ExpiresAt")::text as next from "_Workflow"`)
  return row.next
}

/** Deletes the workflows `where` selects with their requests (not left to the cascade alone). */
function discard(where: string): string {
  return `with gone as (delete from "_Workflow" where ${where} returning "Id"),
               requests as (delete from "_WorkflowRequest" r using gone where r."WorkflowId" = gone."Id")
          select count(*)::int as n from gone`
}

async function touchWorkflow(sql: Sql, id: string, index: number, idleMinutes: number): Promise<void> {
  await sql(
    `update "_Workflow" set "LastIndex" = $2, "LastUsedAt" = now(), "ExpiresAt" = now() + make_interval(secs => $3::double precision)
      where "Id" = $1`,
    [id, index, idleMinutes * 60],
  )
}
