/**
 * The images this process stored lately, as they were stored (metadata removed), until a message takes them: the
 * turn that sends an image reads it here instead of reading megabytes back from the database and decrypting them
 * (the turn's own time, issue 54: the widget uploads a file as soon as it is picked, the message follows within
 * seconds, mostly to the same process). Bounded by bytes and age; each entry is taken once (a file is claimed
 * once). What is not here (another process stored it, it was evicted, the process restarted) is read from the
 * database as before: the claim's statement, not this map, decides whether a message may have a file.
 */
export interface RecentImages {
  put(id: string, bytes: Uint8Array): void
  take(id: string): Uint8Array | undefined
  readonly bytes: number
}

export function createRecentImages(maxBytes: number, maxAgeMs: number, now: () => number = Date.now): RecentImages {
  // insertion order is age order: the oldest first
  const entries = new Map<string, { bytes: Uint8Array; at: number }>()
  let total = 0
  const drop = (id: string) => {
    const e = entries.get(id)
    if (!e) return undefined
    entries.delete(id)
    total -= e.bytes.length
    return e
  }
  const expire = () => {
    const oldest = now() - maxAgeMs
    for (const [id, e] of entries) {
      if (e.at >= oldest && total <= maxBytes) break
      drop(id)
    }
  }
  return {
    put(id, bytes) {
      if (bytes.length > maxBytes) return
      drop(id)
      entries.set(id, { bytes, at: now() })
      total += bytes.length
      expire()
    },
    take(id) {
      expire()
      return drop(id)?.bytes
    },
    get bytes() {
      return total
    },
  }
}
