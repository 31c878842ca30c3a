// Server:TrustedProxies, read: comma-separated addresses and CIDR ranges of the reverse proxies
// in front of the server. The loader checks it with the other keys (config check refuses what
// serve would), and the sign-in throttle reads client addresses through it.

import { BlockList, isIP } from 'node:net'
import { ConfigError } from './load-config.ts'

/** The trusted proxies, or undefined when none is; a ConfigError naming the first entry that is no address or range. */
export function trustedProxyList(setting: string): BlockList | undefined {
  const entries = setting.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  if (entries.length === 0) return undefined
  const list = new BlockList()
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/')
    const family = isIP(address)
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32))
    if (family === 0 || rest.length > 0 || !validPrefix) {
      throw new ConfigError('Server:TrustedProxies', `"${entry}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, ::1)`)
    }
    const type = family === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(prefix), type)
  }
  return list
}
