/**
 * The visitor's session, kept in localStorage per bot so a reload (or another page of the same site)
 * continues the conversation. It lapses after SESSION_TTL_MS without activity. Storage can be missing or
 * refuse writes (private modes, quotas); the widget then simply starts fresh each time.
 */
export const SESSION_TTL_MS = 24 * 3600 * 1000
const MAX_SOURCE_ENTRIES = 30

export interface Source {
  title: string
  url: string
}

export interface StoredSession {
  id: string
  /** Last activity, epoch ms. */
  at: number
  mode: string
  /** The identified user's id (from the identity token), to notice a different visitor logging in. */
  uid?: string
  /** The conversation's language once known (#52): a reload starts in it. */
  lang?: string
  /** Sources shown under answers, by message id: history does not carry them. */
  src?: Record<string, Source[]>
}

export function createStore(botId: string, now: () => number = Date.now) {
  const key = `scb:session:${botId}`
  const langKey = `scb:language:${botId}`
  const storage = (): Storage | null => {
    try {
      return window.localStorage
    } catch {
      return null
    }
  }
  return {
    /** The language the visitor chose in the widget's menu (kept across pages and sessions), else null. */
    loadLanguage(): string | null {
      try {
        const v = storage()?.getItem(langKey) ?? null
        return v && /^[a-z]{2,3}$/.test(v) ? v : null
      } catch {
        return null
      }
    },
    saveLanguage(code: string): void {
      try {
        storage()?.setItem(langKey, code)
      } catch {
        // storage blocked: the choice lasts for this page
      }
    },
    load(): StoredSession | null {
      try {
        const raw = storage()?.getItem(key)
        if (!raw) return null
        const s = JSON.parse(raw) as StoredSession
        if (!s || typeof s.id !== 'string' || typeof s.at !== 'number' || now() - s.at > SESSION_TTL_MS) {
          storage()?.removeItem(key)
          return null
        }
        // a stored language is only ever a short code the service sent; anything else is dropped
        if (s.lang !== undefined && (typeof s.lang !== 'string' || !/^[a-z]{2,3}$/.test(s.lang))) delete s.lang
        return s
      } catch {
        return null
      }
    },
    save(s: StoredSession): void {
      s.at = now()
      if (s.src) {
        const ids = Object.keys(s.src)
        for (const id of ids.slice(0, Math.max(0, ids.length - MAX_SOURCE_ENTRIES))) delete s.src[id]
      }
      try {
        storage()?.setItem(key, JSON.stringify(s))
      } catch {
        // storage full or blocked: the session lives for this page only
      }
    },
    clear(): void {
      try {
        storage()?.removeItem(key)
      } catch {
        // nothing to clear
      }
    },
  }
}
