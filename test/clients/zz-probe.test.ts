import { call, startTestServer } from '../support/test-server.ts'
import { it } from 'vitest'
it('probe', { timeout: 60000 }, async () => {
  const server = await startTestServer()
  const token = await server.token()
  const c = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'X' } })
  const other = await call(`${server.api}/Customers`, { method: 'POST', token, body: { Name: 'Y' } })
  const o = await call(`${server.api}/Customers(${c.body.Guid})/Orders`, { method: 'POST', token, body: { Number: 5 } })
  const k = c.body.Guid, k2 = o.body.Guid
  for (const [method, path, body] of [['GET', `Customers(${k})/Orders(${k2})?$select=Number`], ['GET', `Customers(${other.body.Guid})/Orders(${k2})`], ['GET', `Customers(${k})/Orders(${k2})/Number`], ['GET', `Customers(${k})/Orders/${k2}`], ['PATCH', `Customers(${k})/Orders(${k2})`, { Number: 7 }], ['GET', `Customers(${k})/Orders(${k2})/$ref`], ['DELETE', `Customers(${k})/Orders(${k2})`], ['GET', `Orders(${k2})/Customer(${k})`]] as const) {
    const r = await call(`${server.api}/${path}`, { method, token, body })
    console.log(method, path.replace(/[0-9a-f-]{36}/g, 'K'), r.status, r.text.slice(0, 300))
  }
  console.log((await call(`${server.api}/Orders?$select=Number`, { token })).text)
  await server.stop()
})
