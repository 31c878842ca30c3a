// Mistakes a newcomer makes in a plugin's declarations stop the load with the file, line and
// what to write instead, rather than being ignored (a misspelt option) or answering 500 at the
// first request that reaches them (a method returning an entity type no plugin declares).

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadModel } from '../../server/model/load-plugins.ts'

const dir = mkdtempSync(join(tmpdir(), 'entityctl-declaration-checks-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let cases = 0
/** Loads a plugins folder holding `plugin` alone as library.ts; resolves to the load's error message. */
async function loadError(plugin: string): Promise<string> {
  const folder = join(dir, `case-${++cases}`)
  mkdirSync(folder)
  writeFileSync(join(folder, 'library.ts'), `import { entity, method, p, plugin } from 'entityctl/plugin'${plugin}`)
  try {
    await loadModel(folder)
  } catch (error) {
    return (error as Error).message.split('\n')[0].replace(`${folder}/`, '')
  }
  throw new Error('the plugins loaded')
}

describe('a misspelt option', () => {
  it('of an entity names the nearest option', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Name: p.text() },
  validation: { Name: (book) => book.Name !== '' || 'A name' },
})] })
`)).toBe("library.ts:4:3: Book.validation: is no option of an entity; did you mean validations?")
  })

  it('of a method names the nearest option', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Name: p.text() },
  methods: { Rename: method.modify('Renames', { param: { to: p.text() } }, (book, { to }) => { book.Name = to }) },
})] })
`)).toBe("library.ts:4:29: method.modify: 'param' is no option of a method (static, params, returns); did you mean params?")
  })

  it('of the plugin names the nearest option', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', { properties: { Name: p.text() } })], responsibility: {} })
`)).toBe('library.ts:2:89: plugin.responsibility: is no option of a plugin; did you mean responsibilities?')
  })
})

describe('a method', () => {
  it('returning an entity type no plugin declares', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Name: p.text() },
  methods: { Similar: method.read('Books like this one', { returns: p.many('Bok') }, (_book, { find }) => find('Book')) },
})] })
`)).toBe("library.ts:4:60: Book.methods.Similar.returns: names unknown entity 'Bok'; did you mean Book?")
  })

  it('with a parameter of an entity type no plugin declares', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Name: p.text() },
  methods: { Lend: method.modify('Lends it', { params: { to: p.reference('Membr') } }, () => undefined) },
})] })
`)).toBe("library.ts:4:58: Book.methods.Lend.params.to: names unknown entity 'Membr'")
  })

  it('with a parameter that is no builder', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Name: p.text() },
  methods: { Rename: method.modify('Renames', { params: { to: 'text' } }, (book, { to }) => { book.Name = to }) },
})] })
`)).toBe('library.ts:4:59: Book.methods.Rename.params.to: not a parameter: use p.text(), p.integer(), p.reference(...), ...')
  })
})

describe('a property that is no builder', () => {
  it('says what to use', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Name: 'text' },
})] })
`)).toBe('library.ts:3:17: Book.Name: not a property: use p.text(), p.reference(...), ...')
  })
})

describe('keys and indexes', () => {
  it('a natural key given as a name, not a list', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Isbn: p.text() },
  naturalKey: 'Isbn',
})] })
`)).toBe("library.ts:4:3: Book.naturalKey: must be a list of property names, as ['Isbn']")
  })

  it('an index given as a list of names, not a list of lists', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Book', {
  properties: { Genre: p.text(), Published: p.date() },
  indexes: ['Genre', 'Published desc'],
})] })
`)).toBe("library.ts:4:3: Book.indexes: must be a list of indexes, each a list of keys, as [['Genre', 'Published desc']]")
  })

  it('an encrypted property in a natural key, whose stored values never repeat', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Member', {
  properties: { CardNumber: p.text().encrypted() },
  naturalKey: ['CardNumber'],
})] })
`)).toBe("library.ts:4:3: Member.naturalKey: 'CardNumber' is encrypted: its stored values differ each time, so they cannot be unique")
  })

  it('an encrypted property in an index', async () => {
    expect(await loadError(`
export default plugin({ entities: [entity('Member', {
  properties: { CardNumber: p.text().encrypted() },
  indexes: [['CardNumber']],
})] })
`)).toBe("library.ts:4:3: Member.indexes: 'CardNumber' is encrypted, so no query filters or sorts on it")
  })
})
