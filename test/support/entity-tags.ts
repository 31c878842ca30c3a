// What entityctl's ETags look like (server/persistence/entity-tag.ts): the row version and a
// keyed hash of the xmin of the row, W/"2.9f86d081884c". The xmin is PostgreSQL's to choose,
// the key the tenant database's; a test names the version.

/** The ETag of an entity at `version` (above zero), whichever transaction wrote it. */
export function etagAt(version: number): RegExp {
  return new RegExp(`^W/"${version}\\.[0-9a-f]{12}"$`)
}

/** The ETag of an entity at any version. */
export const ANY_ETAG: RegExp = /^W\/"\d+\.[0-9a-f]{12}"$/
