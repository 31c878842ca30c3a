// Responsibility synchronisation (specification 5.12): the plugins declare responsibilities;
// each tenant's "Responsibility" table follows them at every start and on
// `entityctl responsibility sync`. A responsibility no plugin declares any more leaves the
// roles that had it (their RoleResponsibility rows go) and every PAT scoped to it.

import type { EntityManager } from '@mikro-orm/postgresql'
import { newGuid } from '../persistence/guid.ts'
import type { Model, ResponsibilityModel } from '../model/model.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'
import { byName, type EntityRecord as Row } from '../persistence/entity-name.ts'

export interface SyncReport {
  readonly added: string[]
  readonly changed: string[]
  readonly removed: string[]
  readonly removedFromRoles: { role: string; responsibility: string }[]
}


export async function syncResponsibilities(db: Pick<TenantDatabase, 'fork'>, model: Model): Promise<SyncReport> {
  const report: SyncReport = { added: [], changed: [], removed: [], removedFromRoles: [] }
  await db.fork().transactional(async (em: EntityManager) => {
    const existing = new Map(((await em.find(byName('Responsibility'), {})) as Row[]).map((row) => [row.Name as string, row]))
    for (const declared of model.responsibilities.values()) {
      const wanted = columnsOf(declared)
      const row = existing.get(declared.name)
      if (!row) {
        em.create(byName('Responsibility'), { Guid: newGuid(), Name: declared.name, Title: declared.name, ...wanted })
        report.added.push(declared.name)
      } else if (Object.entries(wanted).some(([key, value]) => (row[key] ?? null) !== value)) {
        em.assign(row, wanted as never)
        report.changed.push(declared.name)
      }
    }
    for (const [name, row] of existing) {
      if (model.responsibilities.has(name)) continue
      const links = (await em.find(byName('RoleResponsibility'), { Responsibility: row.Guid }, { populate: ['Role'] as never })) as Row[]
      for (const link of links) {
        report.removedFromRoles.push({ role: link.Role.Name, responsibility: name })
        em.remove(link)
      }
      em.remove(row)
      report.removed.push(name)
    }
    await em.flush()
  })
  for (const list of [report.added, report.changed, report.removed]) list.sort()
  return report
}

function columnsOf(declared: ResponsibilityModel): { Description: string | null; Permissions: string; Source: string } {
  // Entity names sorted, so the same declaration always gives the same text (no false "changed").
  const permissions = Object.fromEntries(
    Object.keys(declared.permissions)
      .sort()
      .map((entity) => [entity, [...declared.permissions[entity]]]),
  )
  return {
    Description: declared.description ?? null,
    Permissions: JSON.stringify(permissions),
    Source: declared.source.length > 400 ? `…${declared.source.slice(-399)}` : declared.source,
  }
}
