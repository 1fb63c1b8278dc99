import { createContext, useCallback, useContext, useState, type ReactNode } from 'react'

type Tone = 'ok' | 'error'
interface Toast {
  id: number
  text: string
  tone: Tone
  /** a toast about one thing (e.g. `resolved:<ticket id>`): a newer one replaces it, and `dismiss` takes it away */
  key?: string
}
interface Toasts {
  push: (text: string, tone?: Tone, key?: string) => void
  dismiss: (key: string) => void
}
const Ctx = createContext<Toasts>({ push: () => {}, dismiss: () => {} })

/** Short confirmations and failures, announced to screen readers through a live region. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([])
  const push = useCallback((text: string, tone: Tone = 'ok', key?: string) => {
    const id = Date.now() + Math.random()
    setToasts((t) => [...t.filter((x) => !key || x.key !== key).slice(-3), { id, text, tone, key }])
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), tone === 'error' ? 8000 : 4000)
  }, [])
  // A toast whose news is no longer true (a "resolved" one after the ticket was reopened) goes at once.
  const dismiss = useCallback((key: string) => setToasts((t) => (t.some((x) => x.key === key) ? t.filter((x) => x.key !== key) : t)), [])
  const [value] = useState<Toasts>(() => ({ push, dismiss }))
  return (
    <Ctx.Provider value={value}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={`toast toast-${t.tone}`}>
            {t.text}
          </div>
        ))}
      </div>
    </Ctx.Provider>
  )
}

export const useToast = () => useContext(Ctx).push
/** Takes away the toast of one key (see `Toast.key`) when what it said stopped being true. */
export const useToastDismiss = () => useContext(Ctx).dismiss
