// MikroORM's statements reach PostgreSQL with bind parameters, not values in the SQL text.

import { describe, expect, it } from 'vitest'
import { raw } from '@mikro-orm/core'
import { toNativeQuery } from '../../server/persistence/parameterised-driver.ts'

const quote = (id: string) => `"${id.replaceAll('"', '""')}"`

describe('toNativeQuery', () => {
  it.each([
    ['select * from "Order" where "Guid" = ?', ['a'], 'select * from "Order" where "Guid" = $1', ['a']],
    ['where "Guid" in (?) and "_Version" = ?', [['a', 'b'], 3], 'where "Guid" in ($1, $2) and "_Version" = $3', ['a', 'b', 3]],
    ['select ?? from t where x = ?', ['Name', "O'Neil"], 'select "Name" from t where x = $1', ["O'Neil"]],
    ['select data \\? ? from t', ['key'], 'select data ? $1 from t', ['key']],
    ['update t set j = ?', [{ a: 1 }], 'update t set j = $1', ['{"a":1}']],
    ['where a = ? and b = ?', [raw('lower(?)', ['X']), 5], 'where a = lower($1) and b = $2', ['X', 5]],
    ['where b = ? and a = ?', [5, raw('lower(?)', ['X'])], 'where b = $1 and a = lower($2)', [5, 'X']],
    ['insert into t values (?, ?)', [null, 10n], 'insert into t values ($1, $2)', [null, '10']],
  ])('%s', (sql, params, text, values) => {
    expect(toNativeQuery(sql, params as unknown[], quote)).toEqual({ text, values })
  })

  it('keeps a value that looks like SQL a value', () => {
    const { text, values } = toNativeQuery('where "Name" = ?', ["x'; drop table \"Order\"; --"], quote)
    expect(text).toBe('where "Name" = $1')
    expect(values).toEqual(["x'; drop table \"Order\"; --"])
  })
})
