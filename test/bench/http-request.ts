// One HTTP request from the runner (checks, sign-in, preparing write data), sent with node:http
// so the path goes out byte for byte as autocannon will send it (fetch would re-encode quotes).
import { Agent, request as httpRequestRaw } from 'node:http'

const agent = new Agent({ keepAlive: true, maxSockets: 16 })

export type HttpAnswer = { status: number; text: string }

/** `through`: another agent (the tenants run keeps one socket per tenant). */
export function httpRequest(
  origin: string, method: string, path: string, headers: Record<string, string>, body?: string, through: Agent = agent,
): Promise<HttpAnswer> {
  const url = new URL(origin)
  return new Promise((resolve, reject) => {
    const outgoing = httpRequestRaw(
      {
        agent: through, method, path, host: url.hostname, port: url.port,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
        response.on('error', reject)
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

export function closeHttpAgent(): void {
  agent.destroy()
}
