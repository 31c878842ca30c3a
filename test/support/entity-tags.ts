// What entityctl's ETags look like (server/persistence/entity-tag.ts): the row version and the
// xmin of the row, W/"2.48121". The xmin is PostgreSQL's to choose; a test names the version.

/** The ETag of an entity at `version` (above zero), whichever transaction wrote it. */
export function etagAt(version: number): RegExp {
  return new RegExp(`^W/"${version}\\.\\d+"$`)
}

/** The ETag of an entity at any version. */
export const ANY_ETAG: RegExp = /^W\/"\d+\.\d+"$/
