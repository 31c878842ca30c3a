// An entity's ETag: its row version and a hash of the xmin of its row, W/"3.9f86d081884c"
// (one made in SQL for the reads, one in Node for the writes; both say the same of a row).
//
// The version alone repeats: it starts at 1 on every insert, and keys are the client's to
// choose, so a key deleted and created again is at W/"1" once more, and an If-Match sent with
// the first entity's ETag would have changed the second (the lost update the ETag is there to
// refuse). The xmin is the id of the transaction that wrote the row as it is: the later entity
// was written by a later transaction, so its ETag differs whatever its version. It costs no
// column and no migration (tombstones of deleted keys would cost both, and a probe on every
// insert); reading it is reading the row. A row rewritten without a change of its own (a
// restore, a migration filling a column) gets a new xmin: an ETag from before is refused
// (412, read the entity again), never matched to other content; the row cache relies on the
// same (row-cache.ts). Only after some four billion transactions could an xmin repeat.
//
// The xmin itself is never shown: transaction ids are one counter for the whole PostgreSQL
// cluster, which other tenants' databases may share, so a client watching it would count
// every tenant's writes (and a user the writes to types they cannot read). The tag carries
// the first 12 hex digits of md5(secret || xmin), the secret random and the tenant
// database's own ("_EntityTagKey", internal-tables.ts): it differs when the xmin differs
// (but for a 48-bit collision), and says nothing of it. md5 suffices: what it hides is a
// 32-bit counter behind a secret of over 200 random bits. The secret goes with the data
// (backup, restore, move); SQL reads it once per statement, Node once per opening of the
// tenant database (EntityTagKey).
//
// A workflow's pending rows (version below zero, write-statement.ts nextVersion) are written
// again on every request of the workflow (workflow-rebuild.ts), each time by a new
// transaction: their ETag is their version alone, which no row outside a workflow has.

import { hash } from 'node:crypto'
import { VERSION_COLUMN } from '../model/model.ts'
import { quoteIdentifier as quote, type Sql } from './sql.ts'

/** The hex digits of the hash an ETag carries: 48 bits, so two xmins of a row collide one time in 2^48. */
const HASH_DIGITS = 12

/**
 * The ETag of a row at `version` written by the transaction `xmin` (as text), with the tenant
 * database's `secret` (EntityTagKey). Undefined for a committed row whose xmin is not known:
 * an ETag without it would match another entity's.
 */
export function entityTag(version: number, xmin: string | undefined, secret: string): string | undefined {
  if (version < 0) return `W/"${version}"`
  if (xmin === undefined) return undefined
  // The one-shot hash: half the time of a Hash object made, fed and digested (every write answers one).
  return `W/"${version}.${hash('md5', secret + xmin).slice(0, HASH_DIGITS)}"`
}

/**
 * The ETag of the row `alias` in SQL, as entityTag makes it. `alias` is a table, or a write's
 * step that returns the row with its xmin as a column of that name (write-statement.ts). The
 * secret is an uncorrelated subquery: PostgreSQL reads it once per statement (an InitPlan),
 * not once per row.
 */
export function entityTagSql(alias: string): string {
  const version = `${alias}.${quote(VERSION_COLUMN)}`
  const hash = `substr(md5((select "Secret" from ${quote(ENTITY_TAG_KEY_TABLE)}) || ${alias}.xmin::text), 1, ${HASH_DIGITS})`
  return `'W/"' || ${version} || case when ${version} < 0 then '' else '.' || ${hash} end || '"'`
}

/** The table holding the tenant database's secret, one row (internal-tables.ts). */
export const ENTITY_TAG_KEY_TABLE = '_EntityTagKey'

/**
 * The secret of one tenant database, read the first time a write needs it and kept while the
 * database is open (tenancy/tenant-database.ts): the ETags a write answers and checks cost no
 * statement. Read on the caller's connection (a request's own, or its transaction's), never
 * from the pool: a request holding the pool's last connection would wait for itself.
 */
export class EntityTagKey {
  #secret: string | undefined

  async secret(sql: Sql): Promise<string> {
    if (this.#secret !== undefined) return this.#secret
    const [row] = await sql<{ Secret: string }>(`select "Secret" from ${quote(ENTITY_TAG_KEY_TABLE)}`)
    // Made by every migration (internal-tables.ts); a database without it is not served.
    if (!row) throw new Error(`The tenant database has no ETag key (${ENTITY_TAG_KEY_TABLE} is empty): run \`entityctl migrate\`.`)
    this.#secret = row.Secret
    return this.#secret
  }
}

/**
 * Whether `tag` is an ETag as entityctl answered it before ETags carried the xmin (W/"2",
 * the version alone) of a row at `version`. Such a tag can no longer tell that row from
 * another under its key at the same version (deleted and created again), so it is read as
 * naming the row at its version only where that is the safe side: If-None-Match on a write
 * (apply-plan.ts: do not write over that state, 412), and an If-Match a workflow's request
 * matched before the upgrade on a row its commit checks is unchanged (workflow-rebuild.ts).
 */
export function isTagOfVersion(tag: string, version: number): boolean {
  return /^(W\/)?"(\d+)"$/.exec(tag)?.[2] === String(version)
}
