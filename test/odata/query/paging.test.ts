// Server-driven paging: with ApiOptions:MaxTop = 7, a read without $top answers at most 7
// rows and an @odata.nextLink carrying $skiptoken while more exist; following the links
// yields every row once, in order, with the request's other options kept.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { data } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { call } from '../../support/test-server.ts'
import { gt, keysOf, sortRows } from './reference.ts'

const MAX_TOP = 7
const { employees: E, departments: D } = data

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer({ apiOptions: { MaxTop: MAX_TOP } })
})
afterAll(async () => {
  await server?.stop()
})

interface Page {
  readonly value: Record<string, unknown>[]
  readonly nextLink: string | undefined
  readonly count: number | undefined
}

/** Reads the first page and follows every nextLink. */
async function readAllPages(path: string): Promise<Page[]> {
  const pages: Page[] = []
  let next: string | undefined = `${server.server.api}/${path}`
  while (next) {
    const response = await call(next, { token: server.token })
    expect(response.status, response.text).toBe(200)
    const page: Page = { value: response.body.value, nextLink: response.body['@odata.nextLink'], count: response.body['@odata.count'] }
    pages.push(page)
    next = page.nextLink
    expect(pages.length).toBeLessThan(20)
  }
  return pages
}

const withoutEtag = (rows: Record<string, unknown>[]) => rows.map(({ '@odata.etag': _, ...rest }) => rest)

describe('server-driven paging', () => {
  it('pages a read without $top by MaxTop and links to the next page', async () => {
    const pages = await readAllPages('Employees')
    expect(pages.map((p) => p.value.length)).toEqual([7, 7, 7, 7, 2])
    expect(pages[0].nextLink).toMatch(/\?\$skiptoken=7$/)
    expect(pages.at(-1)!.nextLink).toBeUndefined()
    expect(withoutEtag(pages.flatMap((p) => p.value))).toEqual(keysOf(sortRows(E)))
  })

  it('keeps $filter, $orderby, $select and $expand in the next link', async () => {
    const active = E.filter((e) => e.Active)
    const pages = await readAllPages(url('Employees', { $filter: 'Active eq true', $orderby: 'Name desc', $select: 'Name', $expand: 'Manager($select=Name)' }))
    expect(pages.length).toBe(Math.ceil(active.length / MAX_TOP))
    const expected = sortRows(active, [(e) => e.Name, 'desc']).map((e) => ({ Guid: e.Guid, Name: e.Name, Manager: e.Manager && { Guid: e.Manager.Guid, Name: e.Manager.Name } }))
    const rows = pages.flatMap((p) => p.value).map((row) => ({ ...row, Manager: row.Manager && withoutEtag([row.Manager as Record<string, unknown>])[0] }))
    expect(withoutEtag(rows)).toEqual(expected)
  })

  it('counts every row on every page with $count=true', async () => {
    const older = E.filter((e) => gt(e.Age, 30))
    const pages = await readAllPages(url('Employees', { $count: true, $filter: 'Age gt 30' }))
    expect(pages.every((p) => p.count === older.length)).toBe(true)
    expect(pages.flatMap((p) => p.value).length).toBe(older.length)
  })

  it('starts at $skip and continues after it', async () => {
    const pages = await readAllPages(url('Employees', { $skip: 20 }))
    expect(pages.map((p) => p.value.length)).toEqual([7, 3])
    expect(pages[0].nextLink).toMatch(/\$skiptoken=27/)
    expect(pages[0].nextLink).not.toMatch(/\$skip=/)
    expect(withoutEtag(pages.flatMap((p) => p.value))).toEqual(keysOf(sortRows(E).slice(20)))
  })

  it('gives no next link when exactly MaxTop rows exist', async () => {
    const seven = sortRows(E).slice(3, 10)
    const response = await server.get(url('Employees', { $filter: `Guid in (${seven.map((e) => e.Guid).join(',')})` }))
    expect(response.status).toBe(200)
    expect(response.body.value).toHaveLength(7)
    expect(response.body['@odata.nextLink']).toBeUndefined()
  })

  it('gives no next link when $top is given', async () => {
    for (const top of [5, 7]) {
      const response = await server.get(url('Employees', { $top: top }))
      expect(response.status).toBe(200)
      expect(response.body.value).toHaveLength(top)
      expect(response.body['@odata.nextLink']).toBeUndefined()
    }
  })

  it('pages a navigation from one entity', async () => {
    const department = D.reduce((a, b) => (b.Employees.length > a.Employees.length ? b : a))
    expect(department.Employees.length).toBeGreaterThan(MAX_TOP)
    const pages = await readAllPages(`Departments(${department.Guid})/Employees`)
    expect(withoutEtag(pages.flatMap((p) => p.value))).toEqual(keysOf(sortRows(department.Employees)))
  })

  it('refuses $top above MaxTop, in the query and in $expand', async () => {
    for (const path of [url('Employees', { $top: 8 }), url('Employees', { $expand: 'Reports($top=8)' })]) {
      const response = await server.get(path)
      expect(response.status).toBe(400)
      expect(response.body.error.code).toBe('QueryLimitExceeded')
      expect(response.body.error.message).toBe('MaxTop is 7; the request asks for 8.')
    }
  })
})
