import { lazy, Suspense, useEffect, useRef, useState, type ComponentType } from 'react'
import { Link, Redirect, Route, Switch, useLocation } from 'wouter'
import { ForgotPage, LoginPage, SignupPage } from './screens/auth'
import { useLogout, useMe } from './session'
import { ErrorBox, Loading } from './ui/kit'

// Each screen is its own chunk: the login screen loads only the shell.
const screens = {
  Home: lazy(() => import('./screens/home')),
  Bots: lazy(() => import('./screens/bots')),
  BotDetail: lazy(() => import('./screens/bot-detail')),
  Knowledge: lazy(() => import('./screens/knowledge')),
  DocumentDetail: lazy(() => import('./screens/document-detail')),
  SourceDetail: lazy(() => import('./screens/source-detail')),
  Conversations: lazy(() => import('./screens/conversations')),
  Transcript: lazy(() => import('./screens/transcript')),
  BadAnswers: lazy(() => import('./screens/bad-answers')),
  Tickets: lazy(() => import('./screens/tickets')),
  TicketDetail: lazy(() => import('./screens/ticket-detail')),
  Faq: lazy(() => import('./screens/faq')),
  Gaps: lazy(() => import('./screens/gaps')),
  Profile: lazy(() => import('./screens/profile')),
  Settings: lazy(() => import('./screens/settings')),
  Integrations: lazy(() => import('./screens/integrations')),
}

const NAV: [string, string][] = [
  ['/', 'Get started'],
  ['/bots', 'Bots'],
  ['/knowledge', 'Knowledge'],
  ['/conversations', 'Conversations'],
  ['/tickets', 'Tickets'],
  ['/faq', 'FAQ'],
  ['/gaps', 'Gaps'],
  ['/profile', 'Profile'],
  ['/settings', 'Settings'],
  ['/integrations', 'Integrations'],
]

function NavLinks({ onNavigate }: { onNavigate?: () => void }) {
  const [location] = useLocation()
  return (
    <ul>
      {NAV.map(([href, label]) => {
        const active = href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`)
        return (
          <li key={href}>
            <Link href={href} aria-current={active ? 'page' : undefined} onClick={onNavigate}>
              {label}
            </Link>
          </li>
        )
      })}
    </ul>
  )
}

function Shell({ email, children }: { email: string; children: React.ReactNode }) {
  const logout = useLogout()
  const [open, setOpen] = useState(false)
  const [location] = useLocation()
  const main = useRef<HTMLElement>(null)
  const first = useRef(true)
  // Moving between screens puts focus on the new screen's content (not on the first one: a fresh page
  // starts at the top, where the skip link is).
  useEffect(() => {
    if (first.current) first.current = false
    else main.current?.focus()
  }, [location])
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button type="button" className="btn btn-ghost menu-toggle" aria-expanded={open} aria-controls="sidenav" onClick={() => setOpen((o) => !o)}>
          Menu
        </button>
        <span className="brand">Support dashboard</span>
        <span className="topbar-user">
          <span className="muted user-email">{email}</span>
          <button type="button" className="btn btn-ghost btn-small" onClick={() => void logout()}>
            Log out
          </button>
        </span>
      </header>
      <nav id="sidenav" className={`sidenav${open ? ' open' : ''}`} aria-label="Main">
        <NavLinks onNavigate={() => setOpen(false)} />
      </nav>
      <main id="main" ref={main} tabIndex={-1} className="content">
        {children}
      </main>
    </div>
  )
}

function Screen({ c: C, params }: { c: ComponentType<{ params: Record<string, string> }>; params?: Record<string, string> }) {
  return (
    <Suspense fallback={<Loading />}>
      <C params={params ?? {}} />
    </Suspense>
  )
}

function Private() {
  const me = useMe()
  const [location] = useLocation()
  if (me.isPending) return <Loading label="Opening the dashboard…" />
  if (me.isError) return <ErrorBox error={me.error} retry={() => me.refetch()} />
  if (!me.data) return <Redirect to={`/login?next=${encodeURIComponent(location)}`} replace />
  return (
    <Shell email={me.data.email}>
      <Switch>
        <Route path="/">{() => <Screen c={screens.Home} />}</Route>
        <Route path="/bots">{() => <Screen c={screens.Bots} />}</Route>
        <Route path="/bots/:id">{(p) => <Screen c={screens.BotDetail} params={{ id: p.id }} />}</Route>
        <Route path="/knowledge">{() => <Screen c={screens.Knowledge} />}</Route>
        <Route path="/knowledge/documents/:id">{(p) => <Screen c={screens.DocumentDetail} params={{ id: p.id }} />}</Route>
        <Route path="/knowledge/sources/:id">{(p) => <Screen c={screens.SourceDetail} params={{ id: p.id }} />}</Route>
        <Route path="/conversations">{() => <Screen c={screens.Conversations} />}</Route>
        <Route path="/conversations/bad-answers">{() => <Screen c={screens.BadAnswers} />}</Route>
        <Route path="/conversations/:id">{(p) => <Screen c={screens.Transcript} params={{ id: p.id }} />}</Route>
        <Route path="/tickets">{() => <Screen c={screens.Tickets} />}</Route>
        <Route path="/tickets/:id">{(p) => <Screen c={screens.TicketDetail} params={{ id: p.id }} />}</Route>
        <Route path="/faq">{() => <Screen c={screens.Faq} />}</Route>
        <Route path="/gaps">{() => <Screen c={screens.Gaps} />}</Route>
        <Route path="/profile">{() => <Screen c={screens.Profile} />}</Route>
        <Route path="/settings">{() => <Screen c={screens.Settings} />}</Route>
        <Route path="/integrations">{() => <Screen c={screens.Integrations} />}</Route>
        <Route>
          <div className="empty">
            <p className="empty-title">This page does not exist.</p>
            <Link href="/">Back to the start</Link>
          </div>
        </Route>
      </Switch>
    </Shell>
  )
}

/** Public screens when signed out; everything else behind the session. */
export function AppRoutes() {
  const me = useMe()
  const signedIn = !!me.data
  return (
    <Switch>
      <Route path="/login">{signedIn ? <Redirect to="/" /> : <LoginPage />}</Route>
      <Route path="/signup">{signedIn ? <Redirect to="/" /> : <SignupPage />}</Route>
      <Route path="/forgot">
        <ForgotPage />
      </Route>
      <Route>
        <Private />
      </Route>
    </Switch>
  )
}
