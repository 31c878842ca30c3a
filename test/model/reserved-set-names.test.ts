// The first segment of a path under /api is an entity set name or alias, unless it begins a
// fixed route (/api/auth/…, /api/workflow, /api/user/pats, /api/roles/tree, /api/explorer,
// /api/openapi.json) or is OData's own ($metadata, $batch). The router takes those segments
// case-insensitively, so a plugin set named like one would be shadowed (POST /api/Workflow
// would begin a workflow, not create an entity): the loader refuses it, naming the plugin.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { entity, p, plugin } from '../../server/plugin.ts'
import { buildModel } from '../../server/model/build-model.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { PluginError } from '../../server/model/plugin-error.ts'
import { systemPlugin } from '../../server/model/system-entities.ts'
import type { EntityDecl } from '../../server/model/declarations.ts'

const build = (...entities: EntityDecl[]) => () => buildModel([{ source: 'plugins/shop.ts', decl: plugin({ entities }) }], [systemPlugin])

describe('entity set names the fixed routes take', () => {
  it.each([
    ['Workflow', 'workflow'],
    ['Auth', 'auth'],
    ['Explorer', 'explorer'],
    ['WORKFLOW', 'workflow'],
  ])('refuse an entity named %s, whose name is its alias', (name, segment) => {
    expect(build(entity(name, { properties: { Text: p.text() } }))).toThrow(PluginError)
    expect(build(entity(name, { properties: { Text: p.text() } }))).toThrow(
      `plugins/shop.ts: ${name}: the alias '${name}' (the entity's name) is reserved: /api/${segment} is a fixed route`,
    )
  })

  it.each([
    [{ setName: 'Auth' }, "Note.setName: the entity set name 'Auth' is reserved: /api/auth is a fixed route"],
    [{ setName: 'workflow' }, "Note.setName: the entity set name 'workflow' is reserved: /api/workflow is a fixed route"],
    [{ aliases: ['Notes2', 'user'] }, "Note.aliases: the alias 'user' is reserved: /api/user is a fixed route"],
    [{ aliases: ['ROLES'] }, "Note.aliases: the alias 'ROLES' is reserved: /api/roles is a fixed route"],
    [{ aliases: ['Explorer'] }, "Note.aliases: the alias 'Explorer' is reserved: /api/explorer is a fixed route"],
  ])('refuse a set name or alias %j', (names, message) => {
    expect(build(entity('Note', { ...names, properties: { Text: p.text() } }))).toThrow(`plugins/shop.ts: ${message}`)
  })

  it('take an entity named like a route whose aliases leave its name out, and names that only contain one', () => {
    expect(build(entity('Workflow', { aliases: [], properties: {} }))).not.toThrow()
    expect(build(entity('WorkflowStep', { properties: {} }), entity('Authority', { setName: 'Authorities', properties: {} }))).not.toThrow()
  })

  it("leave the system entities their own: /api/User and /api/roles are the Users and Roles sets' aliases", () => {
    const model = build()()
    expect(model.sets.get('User')?.name).toBe('User')
    expect(model.sets.get('roles')?.name).toBe('Role')
  })

  describe('as a start sees it', () => {
    const folder = mkdtempSync(join(tmpdir(), 'entityctl-reserved-'))
    afterAll(() => rmSync(folder, { recursive: true, force: true }))

    it('names the file, the line of the entity and the reserved name', async () => {
      writeFileSync(join(folder, 'steps.ts'), [
        "import { entity, p, plugin } from 'entityctl/plugin'",
        '',
        'export default plugin({ entities: [',
        "  entity('Workflow', { properties: { Name: p.text() } }),",
        '] })',
        '',
      ].join('\n'))
      const error = await loadModel(folder).then(() => undefined, (error: unknown) => error)
      expect(error).toBeInstanceOf(PluginError)
      expect((error as PluginError).summary).toBe(
        `${join(folder, 'steps.ts')}:4:3: Workflow: the alias 'Workflow' (the entity's name) is reserved: /api/workflow is a fixed route (workflows); rename the entity, or declare its aliases without its name (aliases: [])`,
      )
    })
  })
})

describe('entity set names and aliases that differ only in case', () => {
  it.each([
    [{ aliases: ['users'] }, "Note: the alias 'users' differs only in case from 'Users', the entity set of User"],
    [{ setName: 'USERS', aliases: [] }, "Note: the entity set name 'USERS' differs only in case from 'Users', the entity set of User"],
    [{ aliases: ['ROLE'] }, "Note: the alias 'ROLE' differs only in case from 'Role', an alias of Role"],
  ])('are refused beside a system set %j, as the router would take one for the other', (names, message) => {
    expect(build(entity('Note', { ...names, properties: { Text: p.text() } }))).toThrow(`plugins/shop.ts: ${message}`)
  })

  it('are refused between two plugin entities, naming both names', () => {
    expect(build(entity('Note', { properties: {} }), entity('Memo', { aliases: ['NOTES'], properties: {} }))).toThrow(
      "plugins/shop.ts: Memo: the alias 'NOTES' differs only in case from 'Notes', the entity set of Note",
    )
  })

  it('are reported with the file and the line of the entity', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'entityctl-set-case-'))
    try {
      writeFileSync(join(folder, 'people.ts'), [
        "import { entity, p, plugin } from 'entityctl/plugin'",
        '',
        'export default plugin({ entities: [',
        "  entity('Person', { aliases: ['users'], properties: { Name: p.text() } }),",
        '] })',
        '',
      ].join('\n'))
      const error = await loadModel(folder).then(() => undefined, (error: unknown) => error)
      expect(error).toBeInstanceOf(PluginError)
      expect((error as PluginError).summary).toMatch(new RegExp(`^${join(folder, 'people.ts').replace(/[^\w]/g, '\\$&')}:4:3: Person: the alias 'users' differs only in case from 'Users'`))
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it('are taken for one entity, which reaches its set by either', () => {
    expect(build(entity('Note', { aliases: ['notes', 'Note'], properties: {} }))).not.toThrow()
  })
})
