// A TCP port free on 127.0.0.1 at the moment of asking (the kernel's pick for port 0), for a
// server a test starts on a port it must name: metrics, an embedded PostgreSQL, a busy port.

import { createServer } from 'node:net'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}
