// The watchdog's side of stall-watchdog.ts, in a worker thread: it alone runs while the main
// thread is blocked. It reads the heartbeat every beat; once the beat has stood still for the
// limit, it pauses the main thread through the inspector (which interrupts running
// JavaScript), takes its stack, asks V8 to stop that JavaScript and resumes it; the main
// thread, free again, receives the stall and ends the process.

import { Session } from 'node:inspector/promises'
import { writeSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import type { Stall } from './stall-watchdog.ts'

interface CallFrame {
  functionName: string
  location: { scriptId: string; lineNumber: number; columnNumber: number }
}

const { heartbeat, limitMs, beatMs } = workerData as { heartbeat: Int32Array; limitMs: number; beatMs: number }
/** How long the main thread gets to pause, and then to take the stall and exit, before it is killed. */
const GRACE_MS = 5_000

// Counted in this thread's own ticks, not by the clock: a process suspended whole (a laptop
// asleep, a paused VM) stops both threads, and must not look blocked when it wakes.
let lastBeat = Atomics.load(heartbeat, 0)
let stillTicks = 0
const watch = setInterval(() => {
  const beat = Atomics.load(heartbeat, 0)
  if (beat !== lastBeat) {
    lastBeat = beat
    stillTicks = 0
  } else if (++stillTicks * beatMs >= limitMs) {
    clearInterval(watch)
    // Whatever fails on the way, the kill unblock arms first still ends the process.
    unblock(stillTicks * beatMs).catch(() => {})
  }
}, beatMs)

async function unblock(blockedMs: number): Promise<void> {
  // Stuck outside JavaScript (a synchronous system call), the main thread never pauses.
  setTimeout(() => kill({ blockedMs, stack: [] }), GRACE_MS)
  const session = new Session()
  session.connectToMainThread()
  // A frame names its script by id; enabling the debugger announces every script's URL.
  const scripts = new Map<string, string>()
  session.on('Debugger.scriptParsed', ({ params }) => scripts.set(params.scriptId, params.url))
  const paused = new Promise<CallFrame[]>((resolve) => session.once('Debugger.paused', (message) => resolve(message.params.callFrames as CallFrame[])))
  await session.post('Debugger.enable')
  await session.post('Debugger.pause')
  const stack = (await paused).slice(0, 8).map((frame) => describe(frame, scripts))
  // The reply to terminateExecution comes once the JavaScript has stopped, which needs the resume.
  const stopped = session.post('Runtime.terminateExecution')
  await session.post('Debugger.resume')
  await stopped
  parentPort!.postMessage({ blockedMs, stack } satisfies Stall)
}

function describe(frame: CallFrame, scripts: ReadonlyMap<string, string>): string {
  const { scriptId, lineNumber, columnNumber } = frame.location
  return `${frame.functionName || '(anonymous)'} (${scripts.get(scriptId) ?? `script ${scriptId}`}:${lineNumber + 1}:${columnNumber + 1})`
}

function kill(stall: Stall): void {
  writeSync(2, `${JSON.stringify({ level: 60, time: Date.now(), pid: process.pid, ...stall, msg: 'the event loop stayed blocked and could not be freed: killing the process' })}\n`)
  process.kill(process.pid, 'SIGKILL')
}
