// The filters of `find` (persistence/where.ts) as a table: a filter as plugins write it →
// the SQL condition and its parameters, collected by the one parameter collector
// (persistence/sql-parameters.ts). Rule and method searches run them end to end in
// test/rules/methods.test.ts.

import { beforeAll, describe, expect, it } from 'vitest'
import type { EntityModel } from '../../server/model/model.ts'
import { SqlParameters } from '../../server/persistence/sql-parameters.ts'
import { whereSql, type Where } from '../../server/persistence/where.ts'
import { demoModel } from '../odata/metadata/demo-model.ts'

const K = '0193a1b2-0000-7000-8000-000000000001'
let order: EntityModel

beforeAll(async () => {
  order = (await demoModel()).entities.get('Order')!
})

describe('whereSql: filter → SQL and parameters', () => {
  it.each<[string, Where, string, unknown[]]>([
    ['nothing', {}, 'true', []],
    ['equality', { Status: 'Open' }, 't."Status" = $1', ['Open']],
    ['comparisons', { Total: { $gt: 100, $lte: 500 } }, 't."Total" > $1 and t."Total" <= $2', [100, 500]],
    ['null', { OrderDate: null, Status: { $ne: null } }, 't."OrderDate" is null and t."Status" is not null', []],
    ['a reference, by key or by entity', { Customer: { Guid: K } }, 't."Customer_Guid" = $1', [K]],
    ['a list', { Status: { $in: ['Open', 'Closed'] }, Number: { $nin: [1] } }, 't."Status" = any($1) and not t."Number" = any($2)', [['Open', 'Closed'], [1]]],
    ['a date', { OrderDate: { $lt: new Date('2024-01-02T00:00:00Z') } }, 't."OrderDate" < $1', ['2024-01-02T00:00:00.000Z']],
    ['or, and', { $or: [{ Status: 'Open' }, { $and: [{ Total: { $gte: 1 } }, { Number: 7 }] }] }, '(t."Status" = $1) or ((t."Total" >= $2) and (t."Number" = $3))', ['Open', 1, 7]],
    ['empty or', { $or: [] }, 'false', []],
  ])('%s', (_, where, sql, params) => {
    const collector = new SqlParameters()
    expect(whereSql(order, where, 't', collector)).toBe(sql)
    expect(collector.values).toEqual(params)
  })

  it('numbers its placeholders after the parameters the statement already has', () => {
    const collector = new SqlParameters()
    collector.add(K, 'uuid')
    expect(whereSql(order, { Status: 'Open' }, 't', collector)).toBe('t."Status" = $2')
    expect(collector.values).toEqual([K, 'Open'])
  })

  it.each<[string, Where, string]>([
    ['an unknown property', { Nope: 1 }, "Order has no stored property 'Nope'"],
    ['an unknown operator', { Total: { $like: 'x' } }, 'unknown operator $like'],
    ['$in without a list', { Status: { $in: 'Open' } }, '$in expects an array'],
  ])('refuses %s', (_, where, message) => {
    expect(() => whereSql(order, where, 't', new SqlParameters())).toThrow(message)
  })
})
