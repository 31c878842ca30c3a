// $search against a real server and PostgreSQL's full-text index: the entities found equal
// those the same search finds when evaluated in JavaScript over the rows (words lower-cased,
// a word matching a whole word, a phrase consecutive words), at the top level, in $expand,
// as $apply=search(…), with $filter, $count and paging; an entity without searchable
// properties is 400 naming it; and the migration that made the index is stable.

import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSearch } from '../../server/odata/parser/search-parser.ts'
import type { SearchSyntax } from '../../server/odata/parser/syntax.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'

const PLUGINS = fileURLToPath(new URL('./plugins', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Book { Guid: string; Author: string; Name: string; Summary: string | null; Pages: number }

let server: TestServer
let token: string
let api: string
const authors: { Guid: string; Name: string }[] = []
const books: Book[] = []

const WORDS = ['red', 'green', 'blue', 'light', 'dark', 'river', 'stone', 'night', 'garden', 'sea']

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: PLUGINS })
  token = await server.token()
  api = server.api
  for (const name of ['Ada Lovelace', 'Mary Shelley', 'Jules Verne']) authors.push({ Guid: (await post('Authors', { Name: name })).Guid, Name: name })
  // A deterministic spread of words, so every operator has entities on both sides.
  let seed = 7
  const next = () => (seed = (seed * 48271) % 2147483647) % WORDS.length
  for (let i = 0; i < 40; i++) {
    const author = authors[i % authors.length]
    const name = `${WORDS[next()]} ${WORDS[next()]}`
    const summary = i % 5 === 0 ? null : `The ${WORDS[next()]} ${WORDS[next()]} of the ${WORDS[next()]}.`
    const created = await post('Books', { 'Author@odata.bind': `Authors(${author.Guid})`, Name: name, Summary: summary, Pages: 100 + i })
    books.push({ Guid: created.Guid, Author: author.Name, Name: name, Summary: summary, Pages: 100 + i })
  }
})
afterAll(async () => server?.stop())

async function post(path: string, body: unknown) {
  const answer = await call(`${api}/${path}`, { method: 'POST', token, body })
  expect(answer.status, answer.text).toBe(200)
  return answer.body
}
const get = (path: string) => call(`${api}/${path}`, { token })

/** The reference: what PostgreSQL's 'simple' configuration does to these texts. */
const tokens = (text: string) => text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)
function matches(search: SearchSyntax, words: readonly string[]): boolean {
  switch (search.kind) {
    case 'searchTerm': {
      const wanted = tokens(search.text)
      if (!search.phrase) return wanted.every((word) => words.includes(word))
      return words.some((_, start) => wanted.every((word, i) => words[start + i] === word))
    }
    case 'searchNot':
      return !matches(search.operand, words)
    case 'searchBinary':
      return search.op === 'and' ? matches(search.left, words) && matches(search.right, words) : matches(search.left, words) || matches(search.right, words)
  }
}
const bookWords = (book: Book) => tokens(`${book.Name} ${book.Summary ?? ''}`)
const found = (search: string, rows: readonly Book[] = books) => rows.filter((book) => matches(parseSearch(search), bookWords(book))).map((book) => book.Guid).sort()
const guids = (answer: { body: any }) => answer.body.value.map((row: { Guid: string }) => row.Guid).sort()

const SEARCHES = [
  'red',
  'RED',
  'red blue',
  'red AND blue',
  'red OR blue',
  'NOT red',
  '"light green"',
  '"green light"',
  '(red OR blue) AND NOT "dark night"',
  'river OR stone sea',
  'NOT (garden OR sea) night',
  'NOT NOT red',
  'light-green',
  'nothingatall',
  '"the river"',
]

describe('$search', () => {
  it.each(SEARCHES)('%s finds what the reference finds', async (search) => {
    const answer = await get(`Books?$search=${encodeURIComponent(search)}&$select=Guid`)
    expect(answer.status, answer.text).toBe(200)
    expect(guids(answer)).toEqual(found(search))
  })

  it('combines with $filter, $count, $orderby and paging', async () => {
    const answer = await get(`Books?$search=${encodeURIComponent('red OR green')}&$filter=Pages ge 120&$count=true&$orderby=Pages desc&$top=3&$select=Pages`)
    const expected = books.filter((b) => b.Pages >= 120 && matches(parseSearch('red OR green'), bookWords(b))).sort((a, b) => b.Pages - a.Pages)
    expect(answer.body['@odata.count']).toBe(expected.length)
    expect(answer.body.value.map((b: Book) => b.Pages)).toEqual(expected.slice(0, 3).map((b) => b.Pages))
    expect((await get(`Books/$count?$search=blue`)).text).toBe(String(found('blue').length))
  })

  it('searches inside $expand', async () => {
    const answer = await get(`Authors?$select=Name&$orderby=Name&$expand=Books($search=${encodeURIComponent('sea OR "dark night"')};$select=Guid)`)
    expect(answer.status, answer.text).toBe(200)
    for (const author of answer.body.value) {
      expect(guids({ body: { value: author.Books } })).toEqual(found('sea OR "dark night"', books.filter((b) => b.Author === author.Name)))
    }
  })

  it('searches as the first step of $apply, and with $apply', async () => {
    const answer = await get(`Books?$apply=${encodeURIComponent('search(stone OR river)/aggregate($count as N)')}`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body.value).toEqual([{ '@odata.id': null, N: found('stone OR river').length }])
    const combined = await get(`Books?$search=garden&$apply=${encodeURIComponent('aggregate(Pages with sum as P)')}`)
    expect(combined.body.value[0].P).toBe(books.filter((b) => found('garden').includes(b.Guid)).reduce((sum, b) => sum + b.Pages, 0))
  })

  it('answers 400 naming an entity without searchable properties', async () => {
    const answer = await get('Notes?$search=x')
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toContain('Notes has no searchable properties')
  })

  it.each([
    ['Books?$search=', '$search has no value'],
    ['Books?$search=(red', "')' expected"],
    ['Books?$search=red OR', 'a word, a "phrase"'],
    ['Books?$search="red', 'no closing'],
    ['Books?$search=AND', 'a word, a "phrase"'],
  ])('refuses the malformed %s with 400', async (path, message) => {
    const answer = await get(path.replace(/ /g, '%20'))
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toContain(message)
  })

  it('keeps letters outside ASCII in their words (tenant databases use the C locale)', async () => {
    const named = ['Иван Петров', 'Zoë Ångström', '渡辺 健', 'Łódź Writer']
    const made = new Map<string, string>()
    for (const name of named) made.set(name, (await post('Authors', { Name: name })).Guid)
    const authorsFound = async (search: string) => {
      const answer = await get(`Authors?$search=${encodeURIComponent(search)}&$select=Name&$orderby=Name`)
      expect(answer.status, answer.text).toBe(200)
      return answer.body.value.map((row: { Name: string }) => row.Name)
    }
    expect(await authorsFound('Иван')).toEqual(['Иван Петров'])
    expect(await authorsFound('渡辺')).toEqual(['渡辺 健'])
    expect(await authorsFound('"渡辺 健"')).toEqual(['渡辺 健'])
    expect(await authorsFound('Łódź')).toEqual(['Łódź Writer'])
    expect(await authorsFound('Zoë')).toEqual(['Zoë Ångström'])
    // Before, ë and Å were separators: Zoï and ngstr found Zoë Ångström.
    expect(await authorsFound('Zoï')).toEqual([])
    expect(await authorsFound('ngstr')).toEqual([])
    const all = Number((await get('Authors/$count')).text)
    expect(Number((await get(`Authors/$count?$search=${encodeURIComponent('NOT Иван')}`)).text)).toBe(all - 1)
    for (const guid of made.values()) expect((await call(`${api}/Authors(${guid})`, { method: 'DELETE', token })).status).toBe(204)
  })

  it('keeps its index in the tenant schema: a second migration changes nothing', async () => {
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(join(ROOT, 'bin/entityctl'), ['--config', server.configPath, 'migrate', '--json'], { env: { ...process.env, CI: '1' }, timeout: 60_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
      ),
    )
    const reports = JSON.parse(stdout) as { tenant: string; statements: number }[]
    expect(reports.map((r) => r.statements)).toEqual([0])
  })

  it('follows a change of the searchable properties with a migration that loses nothing', async () => {
    // The same plugin with Summary no longer searchable: the column is computed anew.
    const dir = mkdtempSync(join(tmpdir(), 'entityctl-search-'))
    try {
      writeFileSync(join(dir, 'library.ts'), readFileSync(join(PLUGINS, 'library.ts'), 'utf8').replace('Summary: p.multilineText().searchable()', 'Summary: p.multilineText()'))
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(join(ROOT, 'bin/entityctl'), ['--config', server.configPath, 'migrate', '--json'], { env: { ...process.env, CI: '1', Server__PluginsDir: dir }, timeout: 60_000 }, (error, out, err) =>
          error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve(out),
        ),
      )
      expect((JSON.parse(stdout) as { statements: number }[])[0].statements).toBeGreaterThan(0)
      // This server still runs the old model: its index now holds names only.
      const summaryOnly = books.filter((b) => !tokens(b.Name).includes('river') && b.Summary && tokens(b.Summary).includes('river'))
      expect(summaryOnly.length).toBeGreaterThan(0)
      const answer = await get('Books?$search=river&$select=Guid')
      expect(guids(answer)).toEqual(books.filter((b) => tokens(b.Name).includes('river')).map((b) => b.Guid).sort())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
