// GET /api/roles/tree (decisions.md "Roles and permissions"): every role once, under its
// parent, roots first, siblings by name. Property names follow the naming policy.
//
//   [{ "Guid": "…", "Name": "Sales", "Children": [{ "Guid": "…", "Name": "Clerks", "Children": [] }] }]

import type pg from 'pg'
import type { NamingPolicy } from '../model/naming.ts'

export interface RoleNode {
  readonly guid: string
  readonly name: string
  readonly children: RoleNode[]
}

export async function loadRoleTree(pool: pg.Pool): Promise<RoleNode[]> {
  const { rows } = await pool.query<{ guid: string; name: string; parent: string | null }>(
    `select "Guid" as guid, "Name" as name, "Parent_Guid" as parent from "Role" order by "Name", "Guid"`,
  )
  const nodes = new Map(rows.map((row) => [row.guid, { guid: row.guid, name: row.name, children: [] as RoleNode[] }]))
  const roots: RoleNode[] = []
  const placed = new Set<string>()
  const place = (guid: string, into: RoleNode[]) => {
    placed.add(guid)
    into.push(nodes.get(guid)!)
  }
  for (const row of rows) if (!row.parent || !nodes.has(row.parent)) place(row.guid, roots)
  // Breadth first from the roots; a role in a cycle (the rules forbid them) is never reached
  // this way and is listed as a root below, so no role goes missing and the walk ends.
  const queue = [...roots]
  const childrenOf = Map.groupBy(rows.filter((r) => r.parent), (r) => r.parent!)
  while (queue.length > 0) {
    const node = queue.shift()!
    for (const child of childrenOf.get(node.guid) ?? []) {
      if (placed.has(child.guid)) continue
      place(child.guid, node.children)
      queue.push(nodes.get(child.guid)!)
    }
  }
  for (const row of rows) if (!placed.has(row.guid)) place(row.guid, roots)
  return roots
}

export function publicRoleTree(nodes: readonly RoleNode[], naming: NamingPolicy): unknown[] {
  const [guid, name, children] = ['Guid', 'Name', 'Children'].map(naming.toPublic)
  const convert = (node: RoleNode): unknown => ({ [guid]: node.guid, [name]: node.name, [children]: node.children.map(convert) })
  return nodes.map(convert)
}
