// The address of the client behind a request, as the sign-in throttle counts it.
//
// By default it is the address of the socket: a header says only what the client wants it to
// say. Behind reverse proxies (Server:TrustedProxies), the socket is the proxy's, and each
// proxy appends the address it was reached from to X-Forwarded-For. Walking that list from
// the right, the first address that is not a trusted proxy is the client: every entry to
// its right was written by a proxy we trust, every entry to its left may be made up.

import { type BlockList, isIP } from 'node:net'
import { trustedProxyList } from '../config/trusted-proxies.ts'

export type ClientAddressOf = (socketAddress: string | undefined, forwardedFor: string | undefined) => string

/** Reads Server:TrustedProxies (comma-separated addresses and CIDR ranges) once, at start. */
export function clientAddressResolver(trustedProxies: string): ClientAddressOf {
  const trusted = trustedProxyList(trustedProxies)
  return (socketAddress, forwardedFor) => {
    let client = normalise(socketAddress ?? '') ?? 'unknown'
    if (!trusted || !forwardedFor) return client
    const hops = forwardedFor.split(',')
    for (let i = hops.length - 1; i >= 0 && isTrusted(trusted, client); i--) {
      const hop = normalise(hops[i])
      // A trusted proxy writes only addresses: anything else is not evidence of a client.
      if (!hop) break
      client = hop
    }
    return client
  }
}

/**
 * What the per-address counter counts: an IPv4 address, or an IPv6 address's /64 network —
 * one subscriber is usually given a whole /64, so single IPv6 addresses would be free.
 */
export function addressCounterKey(address: string): string {
  if (isIP(address) !== 6) return address
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`
}

function isTrusted(list: BlockList, address: string): boolean {
  const family = isIP(address)
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4')
}

/** A bare IP address from a socket or an X-Forwarded-For entry, or undefined. */
function normalise(raw: string): string | undefined {
  let address = raw.trim()
  // Some proxies add the port: "1.2.3.4:5678", "[2001:db8::1]:5678".
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address)
  if (bracketed) address = bracketed[1]
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.indexOf(':'))
  const family = isIP(address)
  if (family === 0) return undefined
  // An IPv4 client of a dual-stack socket shows as ::ffff:1.2.3.4; it is the same client.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]
  return family === 6 ? address.toLowerCase() : address
}

/** The eight 16-bit groups of a valid IPv6 address, in lower case, without a zone. */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase().replace(/%.*$/, '')
  // A trailing dotted IPv4 part stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number)
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const left = head ? head.split(':') : []
  const right = tail === undefined ? [] : tail ? tail.split(':') : []
  const missing = tail === undefined ? 0 : 8 - left.length - right.length
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((group) => group.replace(/^0+(?=.)/, ''))
}
