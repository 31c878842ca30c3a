// The README's "Query reference" table, run as written: every example of its $filter, $orderby,
// $select, $expand, $compute, $search and $apply rows is sent, percent-encoded as the README
// says, to a server of the demo plugins, and some entity set of the demo must answer it 200.
// An example the demo model refuses teaches a query that does not work.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from './support/test-server.ts'

const README = fileURLToPath(new URL('../README.md', import.meta.url))
const OPTIONS = ['$filter', '$orderby', '$select', '$expand', '$compute', '$search', '$apply']
const SETS = ['Orders', 'Customers', 'Products', 'OrderLines']
/** Examples of what the demo model has no instance of: a recursive navigation. */
const NOT_IN_THE_DEMO = new Set(['Children($levels=2)'])

let server: TestServer
let token: string

beforeAll(async () => {
  server = await startTestServer()
  token = await server.token()
})
afterAll(async () => server?.stop())

/**
 * The examples of an option's row: the code spans of its second cell that stand in the prose
 * itself, not inside its parentheses, up to where the prose goes on after a top-level "; ".
 * Spans naming an option (`$select`) are prose too.
 */
function examples(option: string): string[] {
  const readme = readFileSync(README, 'utf8')
  const section = readme.slice(readme.indexOf('## Query reference'))
  const row = section.split('\n').find((line) => line.startsWith(`| \`${option}\` |`))
  expect(row, `the Query reference has a row for ${option}`).toBeDefined()
  const cell = row!.slice(`| \`${option}\` |`.length)
  const found: string[] = []
  let depth = 0
  for (let i = 0; i < cell.length; i++) {
    const char = cell[i]
    if (char === '`') {
      const end = cell.indexOf('`', i + 1)
      if (depth === 0) found.push(cell.slice(i + 1, end))
      i = end
    } else if (char === '(') depth++
    else if (char === ')') depth--
    else if (depth === 0 && cell.startsWith('; ', i)) break
  }
  return found.filter((example) => !example.startsWith('$') && !NOT_IN_THE_DEMO.has(example))
}

describe("the README's query reference", () => {
  for (const option of OPTIONS) {
    it(`answers every ${option} example on the demo model`, async () => {
      const list = examples(option)
      expect(list.length, `examples of ${option}`).toBeGreaterThan(0)
      for (const example of list) {
        const answers: string[] = []
        for (const set of SETS) {
          const answer = await call(`${server.api}/${set}?${option}=${encodeURIComponent(example)}`, { token })
          if (answer.status === 200) break
          answers.push(`${set}: ${answer.status} ${answer.body?.error?.message}`)
        }
        expect(answers.length, `${option}=${example}\n${answers.join('\n')}`).toBeLessThan(SETS.length)
      }
    })
  }
})
