// Bodies PostgreSQL builds are made compact like every other answer (serializer/compact-json.ts).

import { expect, it } from 'vitest'
import { compactJson } from '../../server/odata/serializer/compact-json.ts'

it("drops the spaces PostgreSQL puts between tokens and keeps every string as it is", () => {
  const built = String.raw`{"@odata.etag" : "W/\"1\"", "Name" : "Ada \" : , \\ Lovelace ", "Lines" : [{"Quantity" : 2}, {"Quantity" : 3}], "Note" : null, "Empty" : ""}`
  const compact = compactJson(built)
  expect(compact).toBe(String.raw`{"@odata.etag":"W/\"1\"","Name":"Ada \" : , \\ Lovelace ","Lines":[{"Quantity":2},{"Quantity":3}],"Note":null,"Empty":""}`)
  expect(JSON.parse(compact)).toEqual(JSON.parse(built))
  expect(compactJson(`{"Total" : 9.00, "A" : [1, 2]}`)).toBe(`{"Total":9.00,"A":[1,2]}`)
  expect(compactJson('{"a":1}')).toBe('{"a":1}')
})
