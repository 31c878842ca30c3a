// One HTTP request sent as given (the target byte for byte, any method, any header, any body)
// on a connection of its own, so a connection the server drops shows as exactly that, never as
// a stale keep-alive socket. Bounded by a timeout: a hang is a failure, not a stuck test.
import { request } from 'node:http'

export interface RawAnswer {
  readonly status: number
  readonly contentType: string | undefined
  readonly body: Buffer
}

export class NoAnswer extends Error {}

export function sendRaw(
  origin: string,
  init: { method: string; path: string; headers: Readonly<Record<string, string>>; body?: Uint8Array },
  timeoutMs: number,
): Promise<RawAnswer> {
  const url = new URL(origin)
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: init.method,
        path: init.path,
        agent: false,
        headers: { ...init.headers, ...(init.body ? { 'content-length': String(init.body.byteLength) } : {}) },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body: Buffer.concat(chunks) }))
        response.on('error', (error) => reject(new NoAnswer(`the answer broke off: ${error.message}`)))
        response.on('aborted', () => reject(new NoAnswer('the answer broke off')))
      },
    )
    outgoing.on('timeout', () => {
      outgoing.destroy()
      reject(new NoAnswer(`no answer within ${timeoutMs} ms`))
    })
    outgoing.on('error', (error) => reject(new NoAnswer(`no answer: ${error.message}`)))
    outgoing.end(init.body)
  })
}
