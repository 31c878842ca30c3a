// Which address the sign-in throttle counts: the socket's, or X-Forwarded-For's behind trusted proxies.
import { describe, expect, it } from 'vitest'
import { addressCounterKey, clientAddressResolver } from '../../server/auth/client-address.ts'

describe('clientAddressResolver', () => {
  it('takes the socket address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const of = clientAddressResolver('')
    expect(of('203.0.113.5', '198.51.100.1')).toBe('203.0.113.5')
    expect(of('::ffff:203.0.113.5', undefined)).toBe('203.0.113.5')
    expect(of(undefined, '198.51.100.1')).toBe('unknown')
  })

  it('takes the rightmost address that is not a trusted proxy', () => {
    const of = clientAddressResolver(' 10.0.0.0/8 , ::1 ')
    expect(of('10.0.0.2', '198.51.100.1')).toBe('198.51.100.1')
    // The client wrote "1.1.1.1" itself; the proxies appended the rest.
    expect(of('10.0.0.2', '1.1.1.1, 198.51.100.1, 10.0.0.3')).toBe('198.51.100.1')
    expect(of('::1', '[2001:db8::7]:4711')).toBe('2001:db8::7')
    expect(of('10.0.0.2', '198.51.100.1:4711')).toBe('198.51.100.1')
    // Only proxies all the way: the leftmost is the client.
    expect(of('10.0.0.2', '10.1.1.1, 10.0.0.3')).toBe('10.1.1.1')
    // Not from a trusted proxy: the header is the client's own invention.
    expect(of('203.0.113.5', '198.51.100.1')).toBe('203.0.113.5')
    // A proxy that wrote no address: the proxy itself is all we know.
    expect(of('10.0.0.2', 'unknown')).toBe('10.0.0.2')
    expect(of('10.0.0.2', '')).toBe('10.0.0.2')
  })

  it.each(['10.0.0.0/33', 'localhost', '10.0.0.1/8/1', '::1/129', '10.0.0.0/x'])('refuses the setting %s at start', (setting) => {
    expect(() => clientAddressResolver(setting)).toThrow(/Server:TrustedProxies/)
  })
})

describe('addressCounterKey', () => {
  it('counts an IPv4 address alone and an IPv6 address by its /64', () => {
    expect(addressCounterKey('203.0.113.5')).toBe('203.0.113.5')
    expect(addressCounterKey('2001:db8:1:2::7')).toBe('2001:db8:1:2::/64')
    expect(addressCounterKey('2001:DB8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(addressCounterKey('::1')).toBe('0:0:0:0::/64')
    expect(addressCounterKey('2001:db8::1.2.3.4')).toBe('2001:db8:0:0::/64')
    expect(addressCounterKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
  })
})
