import { lazy, Suspense, useEffect, useRef, useState, type ComponentType } from 'react'
import { Link, Redirect, Route, Switch, useLocation } from 'wouter'
import { forbiddenText, type Permission, ROLE_WORDS } from './roles'
import { ForgotPage, LoginPage, SignupPage } from './screens/auth'
import { useLogout, useMe, useRole } from './session'
import { InboxAlerts } from './ui/inbox-alerts'
import { Badge, ErrorBox, Forbidden, Loading } from './ui/kit'
import { StatusSwitch } from './ui/status'

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
  Faq: lazy(() => import('./screens/faq')),
  Gaps: lazy(() => import('./screens/gaps')),
  Insights: lazy(() => import('./screens/insights')),
  Profile: lazy(() => import('./screens/profile')),
  MyProfile: lazy(() => import('./screens/my-profile')),
  Settings: lazy(() => import('./screens/settings')),
  SavedReplies: lazy(() => import('./screens/settings-saved-replies')),
  Members: lazy(() => import('./screens/members')),
  AuditLog: lazy(() => import('./screens/audit-log')),
  Integrations: lazy(() => import('./screens/integrations')),
  Actions: lazy(() => import('./screens/actions')),
  ActionDetail: lazy(() => import('./screens/action-detail')),
  Evals: lazy(() => import('./screens/evals')),
  EvalRun: lazy(() => import('./screens/evals-run')),
}

/** Each menu entry with what the role needs to use it: the menu shows only what the member may do. */
const NAV: [string, string, Permission][] = [
  ['/', 'Get started', 'settings'],
  ['/bots', 'Bots', 'settings'],
  ['/knowledge', 'Knowledge', 'knowledge'],
  ['/conversations', 'Conversations', 'tickets'],
  ['/tickets', 'Tickets', 'tickets'],
  ['/faq', 'FAQ', 'knowledge'],
  ['/gaps', 'Gaps', 'knowledge'],
  ['/insights', 'Insights', 'analytics'],
  ['/profile', 'Profile', 'knowledge'],
  // the member's own settings (their name to visitors, alerts): every role has one
  ['/me', 'Your profile', 'member'],
  ['/members', 'Members', 'members'],
  ['/audit-log', 'Audit log', 'audit'],
  ['/settings', 'Settings', 'settings'],
  // Under Settings, but agents and editors use it too (owners, admins and editors manage; agents read).
  ['/settings/saved-replies', 'Saved replies', 'saved_replies_read'],
  ['/integrations', 'Integrations', 'integrations'],
  // Owners and admins manage actions; editors read and dry-run them (`actions_test` covers all three).
  ['/actions', 'Actions', 'actions_test'],
  // Owners, admins and editors write and run the tests; analysts read them (`evals_read` covers all four).
  ['/evals', 'Evaluations', 'evals_read'],
]

const START_FIRST = ['/knowledge', '/tickets']

function NavLinks({ onNavigate }: { onNavigate?: () => void }) {
  const [location] = useLocation()
  const { may } = useRole()
  return (
    <ul>
      {NAV.filter(([, , p]) => may(p)).map(([href, label]) => {
        const under = (h: string) => (h === '/' ? location === '/' : location === h || location.startsWith(`${h}/`))
        // the most specific entry is the current one (Saved replies, not Settings, at /settings/saved-replies)
        const active = under(href) && !NAV.some(([h]) => h !== href && h.startsWith(`${href}/`) && under(h))
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
  const { role } = useRole()
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
      <InboxAlerts />
      <header className="topbar">
        <button type="button" className="btn btn-ghost menu-toggle" aria-expanded={open} aria-controls="sidenav" onClick={() => setOpen((o) => !o)}>
          Menu
        </button>
        <span className="brand">Support dashboard</span>
        <span className="topbar-user">
          <StatusSwitch />
          <span className="muted user-email">{email}</span>
          <Badge tone="info">
            <span className="sr-only">Your role: </span>
            {ROLE_WORDS[role]}
          </Badge>
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

/** A screen behind a permission: a member whose role may not use it reads why instead of a failing page. */
function Allowed({ p, children }: { p: Permission; children: React.ReactNode }) {
  const { role, may } = useRole()
  if (may(p)) return <>{children}</>
  return (
    <>
      <h1>Not available for your role</h1>
      <Forbidden text={forbiddenText(role, p)} />
    </>
  )
}

/** The start screen is the setup checklist for owners and admins; other roles start at their first menu entry. */
function Start() {
  const { may, role } = useRole()
  if (may('settings')) return <Screen c={screens.Home} />
  // An agent's work is the ticket inbox, an editor's the knowledge; otherwise the first screen of the menu.
  const first = [...NAV].sort(([a], [b]) => START_FIRST.indexOf(b) - START_FIRST.indexOf(a)).find(([href, , p]) => href !== '/' && may(p))
  if (first) return <Redirect to={first[0]} replace />
  return (
    <>
      <h1>Welcome</h1>
      <Forbidden text={`Your role (${role}) has no screens in this dashboard yet.`}>
        <p>Ask an owner or admin if you need another role.</p>
      </Forbidden>
    </>
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
        <Route path="/">{() => <Start />}</Route>
        <Route path="/bots">
          {() => (
            <Allowed p="settings">
              <Screen c={screens.Bots} />
            </Allowed>
          )}
        </Route>
        <Route path="/bots/:id">
          {(p) => (
            <Allowed p="settings">
              <Screen c={screens.BotDetail} params={{ id: p.id }} />
            </Allowed>
          )}
        </Route>
        <Route path="/knowledge">
          {() => (
            <Allowed p="knowledge">
              <Screen c={screens.Knowledge} />
            </Allowed>
          )}
        </Route>
        <Route path="/knowledge/documents/:id">
          {(p) => (
            <Allowed p="knowledge">
              <Screen c={screens.DocumentDetail} params={{ id: p.id }} />
            </Allowed>
          )}
        </Route>
        <Route path="/knowledge/sources/:id">
          {(p) => (
            <Allowed p="knowledge">
              <Screen c={screens.SourceDetail} params={{ id: p.id }} />
            </Allowed>
          )}
        </Route>
        <Route path="/conversations">
          {() => (
            <Allowed p="tickets">
              <Screen c={screens.Conversations} />
            </Allowed>
          )}
        </Route>
        <Route path="/conversations/bad-answers">
          {() => (
            <Allowed p="tickets">
              <Screen c={screens.BadAnswers} />
            </Allowed>
          )}
        </Route>
        <Route path="/conversations/:id">
          {(p) => (
            <Allowed p="tickets">
              <Screen c={screens.Transcript} params={{ id: p.id }} />
            </Allowed>
          )}
        </Route>
        {/* one route for the list and an open ticket: moving between tickets keeps the inbox (its filters, its list) */}
        <Route path="/tickets/:id?">
          {(p) => (
            <Allowed p="tickets">
              <Screen c={screens.Tickets} params={p.id ? { id: p.id } : {}} />
            </Allowed>
          )}
        </Route>
        <Route path="/faq">
          {() => (
            <Allowed p="knowledge">
              <Screen c={screens.Faq} />
            </Allowed>
          )}
        </Route>
        <Route path="/gaps">
          {() => (
            <Allowed p="knowledge">
              <Screen c={screens.Gaps} />
            </Allowed>
          )}
        </Route>
        <Route path="/insights">
          {() => (
            <Allowed p="analytics">
              <Screen c={screens.Insights} />
            </Allowed>
          )}
        </Route>
        <Route path="/me">{() => <Screen c={screens.MyProfile} />}</Route>
        <Route path="/profile">
          {() => (
            <Allowed p="knowledge">
              <Screen c={screens.Profile} />
            </Allowed>
          )}
        </Route>
        <Route path="/integrations">
          {() => (
            <Allowed p="integrations">
              <Screen c={screens.Integrations} />
            </Allowed>
          )}
        </Route>
        <Route path="/actions">
          {() => (
            <Allowed p="actions_test">
              <Screen c={screens.Actions} />
            </Allowed>
          )}
        </Route>
        <Route path="/actions/:id">
          {(p) => (
            <Allowed p="actions_test">
              <Screen c={screens.ActionDetail} params={{ id: p.id }} />
            </Allowed>
          )}
        </Route>
        <Route path="/evals">
          {() => (
            <Allowed p="evals_read">
              <Screen c={screens.Evals} />
            </Allowed>
          )}
        </Route>
        <Route path="/evals/runs/:id">
          {(p) => (
            <Allowed p="evals_read">
              <Screen c={screens.EvalRun} params={{ id: p.id }} />
            </Allowed>
          )}
        </Route>
        <Route path="/members">
          {() => (
            <Allowed p="members">
              <Screen c={screens.Members} />
            </Allowed>
          )}
        </Route>
        <Route path="/audit-log">
          {() => (
            <Allowed p="audit">
              <Screen c={screens.AuditLog} />
            </Allowed>
          )}
        </Route>
        <Route path="/settings">
          {() => (
            <Allowed p="settings">
              <Screen c={screens.Settings} />
            </Allowed>
          )}
        </Route>
        <Route path="/settings/saved-replies">
          {() => (
            <Allowed p="saved_replies_read">
              <Screen c={screens.SavedReplies} />
            </Allowed>
          )}
        </Route>
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
