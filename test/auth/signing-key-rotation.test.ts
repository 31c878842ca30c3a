// JWT:SigningKey rotation without signing everyone out: the previous keys, listed in
// JWT:PreviousSigningKeys, still verify the access tokens they signed (until those expire),
// while only the current key signs. A running server follows both keys in its config file
// (its watch, or SIGHUP); a key taken off the list is refused at once, its tokens too.

import { randomBytes } from 'node:crypto'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, readConfigFile, writeConfigFile } from '../../server/config/load-config.ts'
import { keysChangedSinceStart } from '../../server/config/restart-keys.ts'
import { AccessTokens } from '../../server/auth/access-tokens.ts'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { tokens } from './helpers.ts'

const newKey = () => randomBytes(32).toString('base64url')
let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => {
  await server?.stop()
})

/** Writes the JWT keys into the server's config file and has it read the file (as SIGHUP does). */
async function rotate(keys: { SigningKey: string; PreviousSigningKeys?: string }): Promise<void> {
  const file = readConfigFile(server.configPath)
  file.JWT = { SigningKey: keys.SigningKey, ...(keys.PreviousSigningKeys === undefined ? {} : { PreviousSigningKeys: keys.PreviousSigningKeys }) }
  await writeConfigFile(server.configPath, file)
  await server.server.reloadConfig()
}

const tree = async (token: string) => {
  const response = await call(`${server.api}/roles/tree`, { token })
  return [response.status, response.body?.error?.message]
}
const signedWith = async (token: string, key: string) =>
  jwtVerify(token, Buffer.from(key, 'base64url')).then(
    () => true,
    () => false,
  )

describe('rotating JWT:SigningKey on a running server', () => {
  it('accepts tokens of a key while it is listed as previous, signs only with the new one, and refuses the old once it is removed', async () => {
    const first = loadConfig(server.configPath, {}).JWT.SigningKey
    const before = (await tokens(server)).accessToken
    expect(await tree(before)).toEqual([200, undefined])

    const second = newKey()
    await rotate({ SigningKey: second, PreviousSigningKeys: first })
    // Verified before the rotation and remembered: still good, as it is listed.
    expect(await tree(before)).toEqual([200, undefined])
    const after = (await tokens(server)).accessToken
    expect([await signedWith(after, second), await signedWith(after, first)]).toEqual([true, false])
    expect(await tree(after)).toEqual([200, undefined])

    // Two rotations within one token lifetime: both earlier keys listed.
    const third = newKey()
    await rotate({ SigningKey: third, PreviousSigningKeys: `${second}, ${first}` })
    expect(await tree(before)).toEqual([200, undefined])
    expect(await tree(after)).toEqual([200, undefined])

    await rotate({ SigningKey: third, PreviousSigningKeys: second })
    expect(await tree(before)).toEqual([401, 'The access token is not valid: its signature does not match.'])
    expect(await tree(after)).toEqual([200, undefined])
    await rotate({ SigningKey: third })
    expect(await tree(after)).toEqual([401, 'The access token is not valid: its signature does not match.'])
    expect(await signedWith((await tokens(server)).accessToken, third)).toBe(true)
  })

  it('keeps the keys it has when the changed ones are not valid', async () => {
    const current = loadConfig(server.configPath, {}).JWT
    const token = (await tokens(server)).accessToken
    await rotate({ SigningKey: 'short', PreviousSigningKeys: current.SigningKey })
    expect(await tree(token)).toEqual([200, undefined])
    expect(await signedWith((await tokens(server)).accessToken, current.SigningKey)).toBe(true)
    await rotate({ SigningKey: current.SigningKey })
  })

  it('does not count the keys among those that wait for a restart', () => {
    const running = loadConfig(server.configPath, {})
    const next = loadConfig(server.configPath, { JWT__SigningKey: newKey(), JWT__PreviousSigningKeys: running.JWT.SigningKey, JWT__Issuer: 'other' })
    expect(keysChangedSinceStart(running, next)).toEqual(['JWT:Issuer'])
  })
})

describe('a server started with previous signing keys', () => {
  const jwt = (SigningKey: string, PreviousSigningKeys = '') => ({ ...loadConfig(server.configPath, {}).JWT, SigningKey, PreviousSigningKeys })

  it('verifies the tokens of each listed key, and signs with the current one', async () => {
    const [old, older, current] = [newKey(), newKey(), newKey()]
    const guid = '0193a2b4-0000-7000-8000-000000000001'
    const tenant = server.tenants[0]
    const issuedBy = async (key: string) => (await new AccessTokens(jwt(key), () => true).issue(tenant, guid)).accessToken
    const [byOld, byOlder, byCurrent, byStranger] = await Promise.all([issuedBy(old), issuedBy(older), issuedBy(current), issuedBy(newKey())])
    const rotated = new AccessTokens(jwt(current, `${old},${older}`), () => true)
    for (const token of [byOld, byOlder, byCurrent]) await expect(rotated.verify(token)).resolves.toMatchObject({ userGuid: guid, tenant })
    await expect(rotated.verify(byStranger)).rejects.toThrow('its signature does not match')
    expect(await signedWith((await rotated.issue(tenant, guid)).accessToken, current)).toBe(true)
    await expect(new AccessTokens(jwt(current), () => true).verify(byOld)).rejects.toThrow('its signature does not match')
  })
})
