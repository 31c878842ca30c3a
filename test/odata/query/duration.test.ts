// Date and duration arithmetic (OData 4.01 URL Conventions §5.1.1.2) through the HTTP API:
// each operator with Edm.Date, Edm.DateTimeOffset and Edm.Duration operands in $filter,
// $compute, $orderby and $apply, checked against the same arithmetic in JavaScript on
// milliseconds, and each duration an answer carries against an ISO 8601 writer of our own.
// The tenant database runs in Asia/Kolkata (query-server.ts): the arithmetic must be UTC's.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Employee } from '../../fixtures/dataset.ts'
import { data, expectValue, filterCase, valueCase, type QueryCase } from './cases.ts'
import { startQueryServer, url, type QueryServer } from './query-server.ts'
import { keysOf, sortRows } from './reference.ts'

const { employees: E, flights: F } = data

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const ms = (text: string) => Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text)
/** A Date plus a duration, as §5.1.1.2.1 says: at midnight, moved, its time dropped. */
const dateAdd = (date: string, duration: number) => new Date(ms(date) + duration).toISOString().slice(0, 10)
const instant = (time: number) => new Date(time).toISOString()

/** A duration in milliseconds as OData JSON writes it (xs:dayTimeDuration, a day of 24 hours). */
function iso(duration: number): string {
  let rest = Math.abs(duration)
  const days = Math.floor(rest / DAY)
  rest -= days * DAY
  const hours = Math.floor(rest / HOUR)
  rest -= hours * HOUR
  const minutes = Math.floor(rest / MINUTE)
  rest -= minutes * MINUTE
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${rest ? `${rest / SECOND}S` : ''}`
  return `${duration < 0 ? '-' : ''}P${days ? `${days}D` : ''}${time ? `T${time}` : days ? '' : 'T0S'}`
}

const emp = (filter: string, predicate: (e: Employee) => boolean) => filterCase('Employees', E, filter, predicate)
const login = (e: Employee) => (e.LastLogin === null ? null : ms(e.LastLogin))
const JUNE = '2024-06-01T00:00:00Z'
const [ada] = E.filter((e) => e.LastLogin !== null)
const hired = E.filter((e) => e.HireDate !== null)
const sinceJune = (e: Employee) => (e.LastLogin === null ? null : ms(e.LastLogin) - ms(JUNE))

const filters: QueryCase[] = [
  // DateTimeOffset add|sub Duration → DateTimeOffset
  emp(`LastLogin add duration'P1D' gt ${JUNE}`, (e) => login(e) !== null && login(e)! + DAY > ms(JUNE)),
  emp(`LastLogin sub duration'PT36H30M' le 2024-03-01T00:00:00Z`, (e) => login(e) !== null && login(e)! - 36.5 * HOUR <= ms('2024-03-01T00:00:00Z')),
  emp(`LastLogin add duration'-P10DT0.5S' lt 2024-05-01T00:00:00+05:30`, (e) => login(e) !== null && login(e)! - 10 * DAY - 500 < ms('2024-05-01T00:00:00+05:30')),
  emp(`LastLogin sub -duration'PT12H' ge 2024-09-15T12:00:00Z`, (e) => login(e) !== null && login(e)! + 12 * HOUR >= ms('2024-09-15T12:00:00Z')),
  // A quoted duration without its prefix, beside a date (OData 4.01 ABNF: durationValue).
  emp(`LastLogin add 'PT12H' gt 2024-09-15T12:00:00Z`, (e) => login(e) !== null && login(e)! + 12 * HOUR > ms('2024-09-15T12:00:00Z')),
  emp(`LastLogin gt now() sub duration'P30D'`, (e) => login(e) !== null && login(e)! > Date.now() - 30 * DAY),
  emp(`LastLogin lt now() sub duration'P30D'`, (e) => login(e) !== null && login(e)! < Date.now() - 30 * DAY),
  // Date add|sub Duration → Date: the time part moves the date only across midnight.
  emp(`HireDate add duration'P30D' gt 2015-02-01`, (e) => e.HireDate !== null && dateAdd(e.HireDate, 30 * DAY) > '2015-02-01'),
  emp(`HireDate sub duration'P400D' lt 2010-01-01`, (e) => e.HireDate !== null && dateAdd(e.HireDate, -400 * DAY) < '2010-01-01'),
  // A null equals a null (§5.1.1.1.1): the rows without a HireDate match too.
  emp(`HireDate add duration'PT23H59M59.999S' eq HireDate`, () => true),
  emp(`HireDate sub duration'PT0.001S' lt HireDate`, (e) => e.HireDate !== null),
  emp(`HireDate sub duration'PT1H' eq ${dateAdd(hired[0].HireDate!, -DAY)}`, (e) => e.HireDate !== null && dateAdd(e.HireDate, -HOUR) === dateAdd(hired[0].HireDate!, -DAY)),
  emp(`HireDate add duration'-P1DT1S' eq ${dateAdd(hired[1].HireDate!, -2 * DAY)}`, (e) => e.HireDate !== null && dateAdd(e.HireDate, -DAY - SECOND) === dateAdd(hired[1].HireDate!, -2 * DAY)),
  // A Date result meets a DateTimeOffset at midnight UTC, as a Date does.
  emp(`HireDate add duration'P1D' gt LastLogin`, (e) => e.HireDate !== null && login(e) !== null && ms(dateAdd(e.HireDate, DAY)) > login(e)!),
  // Date sub Date and DateTimeOffset sub DateTimeOffset → Duration, and every comparison of durations.
  emp(`HireDate sub 2010-06-15 gt duration'P365D'`, (e) => e.HireDate !== null && ms(e.HireDate) - ms('2010-06-15') > 365 * DAY),
  emp(`HireDate sub 2010-06-15 le -duration'P100D'`, (e) => e.HireDate !== null && ms(e.HireDate) - ms('2010-06-15') <= -100 * DAY),
  emp(`LastLogin sub ${JUNE} ge duration'P30DT12H'`, (e) => sinceJune(e) !== null && sinceJune(e)! >= 30 * DAY + 12 * HOUR),
  emp(`LastLogin sub ${JUNE} lt duration'-P30DT12H'`, (e) => sinceJune(e) !== null && sinceJune(e)! < -(30 * DAY + 12 * HOUR)),
  emp(`LastLogin sub ${JUNE} eq duration'${iso(sinceJune(ada)!)}'`, (e) => sinceJune(e) === sinceJune(ada)),
  emp(`LastLogin sub ${JUNE} ne duration'${iso(sinceJune(ada)!)}'`, (e) => sinceJune(e) !== sinceJune(ada)),
  emp(`(LastLogin sub ${JUNE}) in ('${iso(sinceJune(ada)!)}', duration'P1D')`, (e) => sinceJune(e) === sinceJune(ada) || sinceJune(e) === DAY),
  // Duration add|sub Duration, negation, and a row's durations against each other.
  emp(`duration'P1D' add duration'PT12H' eq duration'PT36H'`, () => true),
  emp(`duration'P1D' sub duration'PT25H' eq -duration'PT1H'`, () => true),
  emp(`(LastLogin sub 2024-01-01T00:00:00Z) sub (LastLogin sub 2024-01-02T00:00:00Z) eq duration'P1D'`, (e) => e.LastLogin !== null),
  emp(`HireDate sub HireDate eq duration'PT0S'`, (e) => e.HireDate !== null),
  filterCase('Flights', F, `Departure sub duration'PT90M' ge ${F[3].Departure}`, (f) => ms(f.Departure) - 90 * MINUTE >= ms(F[3].Departure)),
]

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer()
})
afterAll(async () => server?.stop())

describe('date and duration arithmetic', () => {
  it('the filter cases select some rows and not all, most of them', () => {
    const telling = filters.filter(({ expected }) => Array.isArray(expected) && expected.length > 0 && expected.length < E.length)
    expect(telling.length).toBeGreaterThan(filters.length * 0.6)
  })

  it.each(filters.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, c) => {
    await expectValue(server, c)
  })

  it('computes durations, dates and times, writing each duration as ISO 8601', async () => {
    const compute = [
      `LastLogin sub ${JUNE} as Since`,
      `HireDate add duration'P1DT2H' as Next`,
      'HireDate sub 2000-01-01 as Tenure',
      `LastLogin add duration'-PT1.5S' as Before`,
      'HireDate sub HireDate as Zero',
      `-(LastLogin sub ${JUNE}) add duration'PT0.25S' as Back`,
    ].join(',')
    const expected = sortRows(E).map((e) => ({
      Guid: e.Guid,
      Since: sinceJune(e) === null ? null : iso(sinceJune(e)!),
      Next: e.HireDate && dateAdd(e.HireDate, DAY + 2 * HOUR),
      Tenure: e.HireDate && iso(ms(e.HireDate) - ms('2000-01-01')),
      Before: e.LastLogin && instant(ms(e.LastLogin) - 1500),
      Zero: e.HireDate && 'PT0S',
      Back: sinceJune(e) === null ? null : iso(-sinceJune(e)! + 250),
    }))
    await expectValue(server, valueCase(url('Employees', { $compute: compute, $select: 'Guid,Since,Next,Tenure,Before,Zero,Back' }), expected))
    expect(expected.some((e) => e.Since?.startsWith('-P')) && expected.some((e) => e.Since?.startsWith('P'))).toBe(true)
  })

  it('computes a duration through a reference, and a null one where the reference is missing', async () => {
    const gap = (e: Employee) => (e.Manager?.LastLogin && e.LastLogin ? iso(ms(e.Manager.LastLogin) - ms(e.LastLogin)) : null)
    const expected = sortRows(E).map((e) => ({ Guid: e.Guid, Gap: gap(e) }))
    expect(expected.filter((e) => e.Gap !== null).length).toBeGreaterThan(3)
    await expectValue(server, valueCase(url('Employees', { $compute: 'Manager/LastLogin sub LastLogin as Gap', $select: 'Guid,Gap' }), expected))
  })

  it('writes a literal duration as given, normalised to days of 24 hours', async () => {
    const compute = "duration'PT36H' as A,duration'-p2dt3h4m5.678s' as B,duration'PT0S' as C,duration'P0DT90M' as D,duration'PT0.000001S' as F"
    const answer = await server.get(url(`Employees(${ada.Guid})`, { $compute: compute, $select: 'A,B,C,D,F' }))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ A: 'P1DT12H', B: '-P2DT3H4M5.678S', C: 'PT0S', D: 'PT1H30M', F: 'PT0.000001S' })
  })

  it('types a computed duration Edm.Duration in full metadata', async () => {
    const answer = await server.get(url(`Employees(${ada.Guid})`, { $compute: `LastLogin sub ${JUNE} as Since`, $select: 'Since' }), { Accept: 'application/json;odata.metadata=full' })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body['Since@odata.type']).toBe('#Duration')
    expect(answer.body.Since).toBe(iso(sinceJune(ada)!))
  })

  it('sorts by a duration, nulls first ascending and last descending', async () => {
    await expectValue(server, valueCase(url('Employees', { $orderby: `LastLogin sub ${JUNE} desc` }), keysOf(sortRows(E, [sinceJune, 'desc']))))
    await expectValue(server, valueCase(url('Employees', { $orderby: `HireDate sub duration'PT1H',Name` }), keysOf(sortRows(E, (e) => e.HireDate && dateAdd(e.HireDate, -HOUR), (e) => e.Name))))
  })

  it('filters, computes and aggregates durations in $apply', async () => {
    const rows = E.filter((e) => e.HireDate !== null && dateAdd(e.HireDate, DAY) > '2015-01-01' && e.LastLogin !== null)
    const spans = rows.map((e) => ms(e.LastLogin!) - ms('2024-01-01T00:00:00Z'))
    const apply = `filter(HireDate add duration'P1D' gt 2015-01-01 and LastLogin ne null)/compute(LastLogin sub 2024-01-01T00:00:00Z as D)/aggregate(D with max as Longest,D with min as Shortest)`
    await expectValue(server, valueCase(url('Employees', { $apply: apply }), [{ '@odata.id': null, Longest: iso(Math.max(...spans)), Shortest: iso(Math.min(...spans)) }]))
  })

  it('groups by a computed duration, written as ISO 8601 in each group', async () => {
    const apply = `compute(HireDate sub duration'PT1H' sub HireDate as Back)/groupby((Back),aggregate($count as N))`
    const nulls = E.filter((e) => e.HireDate === null).length
    await expectValue(server, valueCase(url('Employees', { $apply: apply }), [
      { '@odata.id': null, Back: null, N: nulls },
      { '@odata.id': null, Back: '-P1D', N: E.length - nulls },
    ]))
  })

  it('casts a duration to Edm.String as ISO 8601, and a string to Edm.Duration when it is one', async () => {
    const compute = [
      `cast(LastLogin sub ${JUNE},Edm.String) as Text`,
      `cast('-p1dt2h',Edm.Duration) as Parsed`,
      `cast('P1M',Edm.Duration) as Months`,
      `cast('PT',Edm.Duration) as Empty`,
      `isof(LastLogin sub ${JUNE},Edm.Duration) as Is`,
    ].join(',')
    const answer = await server.get(url(`Employees(${ada.Guid})`, { $compute: compute, $select: 'Text,Parsed,Months,Empty,Is' }))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ Text: iso(sinceJune(ada)!), Parsed: '-P1DT2H', Months: null, Empty: null, Is: true })
  })

  it('answers 400, never 500, for a sum that leaves the range of timestamps', async () => {
    const answer = await server.get(url('Employees', { $filter: `LastLogin add duration'P999999999D' gt now()` }))
    expect(answer.status, answer.text).toBe(400)
  })
})
