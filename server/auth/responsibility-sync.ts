// Responsibility synchronisation (specification 5.12): the plugins declare responsibilities;
// each tenant's "Responsibility" table follows them at every start and on
// `entityctl responsibility sync`. A responsibility no plugin declares any more leaves the
// roles that had it (their RoleResponsibility rows go) and every PAT scoped to it.

import type { Model, ResponsibilityModel } from '../model/model.ts'
import { poolSession } from '../persistence/session.ts'
import { announceAccessChange } from './access-listener.ts'
import type { TenantDatabase } from '../tenancy/tenant-database.ts'

export interface SyncReport {
  readonly added: string[]
  readonly changed: string[]
  readonly removed: string[]
  readonly removedFromRoles: { role: string; responsibility: string }[]
}


export async function syncResponsibilities(db: TenantDatabase, model: Model): Promise<SyncReport> {
  let report: SyncReport = { added: [], changed: [], removed: [], removedFromRoles: [] }
  const [Responsibility, RoleResponsibility, Role] = ['Responsibility', 'RoleResponsibility', 'Role'].map((name) => db.model.entities.get(name)!)
  await poolSession(db).write(async (unit) => {
    report = { added: [], changed: [], removed: [], removedFromRoles: [] }
    const existing = new Map((await unit.find(Responsibility)).map((entry) => [entry.values.Name as string, entry]))
    for (const declared of model.responsibilities.values()) {
      const wanted = columnsOf(declared)
      const entry = existing.get(declared.name) ?? renamedByTrimming(existing, declared.name, model)
      if (entry && entry.values.Name !== declared.name) {
        existing.delete(entry.values.Name as string)
        existing.set(declared.name, entry)
        Object.assign(entry.values, { Name: declared.name, ...wanted })
        report.changed.push(declared.name)
      } else if (!entry) {
        Object.assign(unit.create(Responsibility).values, { Name: declared.name, Title: declared.name, ...wanted })
        report.added.push(declared.name)
      } else if (Object.entries(wanted).some(([key, value]) => (entry.values[key] ?? null) !== value)) {
        Object.assign(entry.values, wanted)
        report.changed.push(declared.name)
      }
    }
    for (const [name, entry] of existing) {
      if (model.responsibilities.has(name)) continue
      const links = await unit.find(RoleResponsibility, { Responsibility: entry.key })
      const roles = await unit.load(links.map((link) => ({ entity: Role, key: link.values.Role as string })))
      links.forEach((link, i) => {
        report.removedFromRoles.push({ role: roles[i].values.Name as string, responsibility: name })
        unit.remove(link)
      })
      unit.remove(entry)
      report.removed.push(name)
    }
  })
  for (const list of [report.added, report.changed, report.removed]) list.sort()
  // Running instances cache who holds which responsibility.
  if (report.changed.length + report.removed.length > 0) await announceAccessChange(db.url, 'Responsibility')
  return report
}

/**
 * The row an earlier version recorded for `name` with spaces around it: the loader refuses
 * such a name now ('ReadReports '), so the plugin declares it trimmed, and the row is renamed
 * in place rather than removed with the roles and PATs that hold it. Not a row some plugin
 * still declares under its own name.
 */
function renamedByTrimming<T extends { readonly values: Record<string, unknown> }>(existing: ReadonlyMap<string, T>, name: string, model: Model): T | undefined {
  for (const [stored, entry] of existing) if (stored !== name && stored.trim() === name && !model.responsibilities.has(stored)) return entry
  return undefined
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
