// The service document (GET /api/): every entity set, canonical names only.

import type { Model } from '../../model/model.ts'

export function serviceDocument(model: Model, root: string): string {
  const sets = [...model.entities.values()]
    .map((entity) => ({ name: entity.setName, kind: 'EntitySet', url: entity.setName }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return JSON.stringify({ '@odata.context': `${root}$metadata`, value: sets })
}
