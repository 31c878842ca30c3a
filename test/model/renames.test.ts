// renamedFrom in plugin declarations: what the loader accepts and refuses, and how the schema
// version (migrations/schema-version.ts) follows what a migration derives from the model.

import { describe, expect, it } from 'vitest'
import { entity, p, plugin } from '../../server/plugin.ts'
import { buildModel } from '../../server/model/build-model.ts'
import { schemaVersion } from '../../server/migrations/schema-version.ts'
import type { EntityDecl } from '../../server/model/declarations.ts'

const build = (...entities: EntityDecl[]) => buildModel([{ source: 'plugins/shop.ts', decl: plugin({ version: '2.0.0', entities }) }])

describe('renamedFrom', () => {
  it('binds an entity rename and property renames, and lists the plugin with its version', () => {
    const model = build(
      entity('Client', { renamedFrom: 'Customer', properties: { Email: p.email().renamedFrom('Mail'), Owner: p.reference('Client').renamedFrom('Parent') } }),
    )
    const client = model.entities.get('Client')!
    expect(client.renamedFrom).toBe('Customer')
    const email = client.properties.get('Email')!
    expect(email.kind === 'scalar' && email.decl.renamedFrom).toBe('Mail')
    const owner = client.properties.get('Owner')!
    expect(owner.kind === 'reference' && owner.decl.renamedFrom).toBe('Parent')
    expect(model.plugins).toEqual([{ source: 'plugins/shop.ts', version: '2.0.0' }])
  })

  it.each([
    ['an entity renamed from one still declared', [entity('A', { renamedFrom: 'B', properties: {} }), entity('B', { properties: {} })], "A.renamedFrom: 'B' is still declared"],
    ['a property renamed from a sibling', [entity('A', { properties: { X: p.text().renamedFrom('Y'), Y: p.text() } })], "A.X.renamedFrom: 'Y' is still a property of A"],
    ['a virtual property with a rename', [entity('A', { properties: { X: p.text().virtual().renamedFrom('Y') }, computed: { X: { from: [], value: () => 'x' } } })], 'A.X.renamedFrom: a virtual property has no column to rename'],
    ['a rename that is not a name', [entity('A', { renamedFrom: 'not a name', properties: {} })], "A.renamedFrom: must be the entity's previous name"],
  ])('refuses %s, naming it', (_, entities, message) => {
    expect(() => build(...(entities as EntityDecl[]))).toThrow(message)
  })
})

describe('schemaVersion', () => {
  const base = () => entity('Note', { properties: { Text: p.text().maxLength(40), Stars: p.integer() } })

  it('is the same for the same declarations, and ignores what no migration derives (labels, rules)', () => {
    const labelled = entity('Note', { properties: { Text: p.text().maxLength(40).label('Text'), Stars: p.integer() }, validations: { Stars: () => true } })
    expect(schemaVersion(build(base()))).toBe(schemaVersion(build(base())))
    expect(schemaVersion(build(labelled))).toBe(schemaVersion(build(base())))
  })

  it.each([
    ['a new property', entity('Note', { properties: { Text: p.text().maxLength(40), Stars: p.integer(), Pinned: p.boolean() } })],
    ['a narrower type', entity('Note', { properties: { Text: p.text().maxLength(20), Stars: p.integer() } })],
    ['a required property', entity('Note', { properties: { Text: p.text().maxLength(40).required(), Stars: p.integer() } })],
    ['a rename', entity('Note', { properties: { Text: p.text().maxLength(40), Rating: p.integer().renamedFrom('Stars') } })],
    ['an index', entity('Note', { properties: { Text: p.text().maxLength(40), Stars: p.integer() }, indexes: [['Stars']] })],
  ])('changes with %s', (_, changed) => {
    expect(schemaVersion(build(changed))).not.toBe(schemaVersion(build(base())))
  })
})
