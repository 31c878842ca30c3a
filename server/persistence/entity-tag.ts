// An entity's ETag: its row version and the xmin of its row, W/"3.48121" (one made in SQL for
// the reads, one in Node for the writes; both say the same of a row).
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
// A workflow's pending rows (version below zero, write-statement.ts nextVersion) are written
// again on every request of the workflow (workflow-rebuild.ts), each time by a new
// transaction: their ETag is their version alone, which no row outside a workflow has.

import { VERSION_COLUMN } from '../model/model.ts'
import { quoteIdentifier as quote } from './sql.ts'

/**
 * The ETag of a row at `version` written by the transaction `xmin` (as text). Undefined for a
 * committed row whose xmin is not known: an ETag without it would match another entity's.
 */
export function entityTag(version: number, xmin: string | undefined): string | undefined {
  if (version < 0) return `W/"${version}"`
  return xmin === undefined ? undefined : `W/"${version}.${xmin}"`
}

/**
 * The ETag of the row `alias` in SQL, as entityTag makes it. `alias` is a table, or a write's
 * step that returns the row with its xmin as a column of that name (write-statement.ts).
 */
export function entityTagSql(alias: string): string {
  const version = `${alias}.${quote(VERSION_COLUMN)}`
  return `'W/"' || ${version} || case when ${version} < 0 then '' else '.' || ${alias}.xmin end || '"'`
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
