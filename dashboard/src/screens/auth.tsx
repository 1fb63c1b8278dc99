import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { Link, useLocation, useSearch } from 'wouter'
import { api, call } from '../api/client'
import { Button, ErrorBox, Field, fieldError } from '../ui/kit'

function AuthCard({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">
          Support dashboard
        </p>
        <h1>{title}</h1>
        {children}
        {footer && <div className="auth-footer">{footer}</div>}
      </div>
    </main>
  )
}

/** Where to go after signing in: the `next` the login screen was sent with, if it is one of ours. */
function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next')
  return next && /^\/[A-Za-z0-9/_?=&.-]*$/.test(next) && !next.startsWith('//') ? next : '/'
}

export function LoginPage() {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [, navigate] = useLocation()
  const search = useSearch()
  const qc = useQueryClient()
  const login = useMutation({
    mutationFn: () => call(api.POST('/auth/login', { body: { email, password } })),
    onSuccess: async (r) => {
      qc.setQueryData(['me'], r.user)
      navigate(nextPath(search))
    },
  })
  const submit = (e: FormEvent) => {
    e.preventDefault()
    login.mutate()
  }
  return (
    <AuthCard
      title="Log in"
      footer={
        <>
          <Link href="/forgot">Forgot your password?</Link>
          <span>
            New here? <Link href="/signup">Create an account</Link>
          </span>
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Field
          label="Email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fieldError(login.error, 'email')}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={fieldError(login.error, 'password')}
        />
        <ErrorBox error={login.error && !fieldError(login.error, 'email', 'password') ? login.error : null} />
        <Button type="submit" variant="primary" busy={login.isPending} className="btn-block">
          Log in
        </Button>
      </form>
    </AuthCard>
  )
}

export function SignupPage() {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const signup = useMutation({ mutationFn: () => call(api.POST('/auth/register', { body: { email, password } })) })
  if (signup.isSuccess)
    return (
      <AuthCard title="Check your email" footer={<Link href="/login">Back to log in</Link>}>
        <p>
          We sent a verification link to <strong>{email}</strong>. Open it to finish creating your account.
        </p>
        <p className="hint">Running without SMTP_URL? The mail is written under DATA_DIR/outbox, and the link is in the service log.</p>
      </AuthCard>
    )
  return (
    <AuthCard
      title="Create your account"
      footer={
        <span>
          Already have an account? <Link href="/login">Log in</Link>
        </span>
      }
    >
      <form
        onSubmit={(e) => {
          e.preventDefault()
          signup.mutate()
        }}
        noValidate
      >
        <Field
          label="Work email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fieldError(signup.error, 'email')}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          hint="At least 8 characters."
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={fieldError(signup.error, 'password')}
        />
        <ErrorBox error={signup.error && !fieldError(signup.error, 'email', 'password') ? signup.error : null} />
        <Button type="submit" variant="primary" busy={signup.isPending} className="btn-block">
          Create account
        </Button>
      </form>
    </AuthCard>
  )
}

export function ForgotPage() {
  const [email, setEmail] = useState('')
  const forgot = useMutation({ mutationFn: () => call(api.POST('/auth/forgot-password', { body: { email } })) })
  return (
    <AuthCard title="Reset your password" footer={<Link href="/login">Back to log in</Link>}>
      {forgot.isSuccess ? (
        <p role="status">{forgot.data.message}</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            forgot.mutate()
          }}
          noValidate
        >
          <Field
            label="Email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={fieldError(forgot.error, 'email')}
          />
          <ErrorBox error={forgot.error && !fieldError(forgot.error, 'email') ? forgot.error : null} />
          <Button type="submit" variant="primary" busy={forgot.isPending} className="btn-block">
            Send reset link
          </Button>
        </form>
      )}
    </AuthCard>
  )
}

/** `/verify?token=`: the link in the verification mail. Verifying also signs the operator in. */
export function VerifyPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const qc = useQueryClient()
  const [, navigate] = useLocation()
  const verify = useMutation({
    mutationFn: () => call(api.POST('/auth/verify-email', { body: { token } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['me'] }),
  })
  const started = useRef(false)
  useEffect(() => {
    if (token && !started.current) {
      started.current = true
      verify.mutate()
    }
  }, [token, verify])
  return (
    <AuthCard title="Verify your email" footer={<a href="/app/login">Go to log in</a>}>
      {!token && <ErrorBox error={new Error('This link has no token. Open the link from the mail again.')} />}
      {verify.isPending && <p role="status">Verifying…</p>}
      {verify.isSuccess && (
        <>
          <p role="status">Your email is verified. Welcome!</p>
          <Button variant="primary" onClick={() => navigate('~/app/')}>
            Open the dashboard
          </Button>
        </>
      )}
      <ErrorBox error={verify.error} />
    </AuthCard>
  )
}

/** `/reset-password?token=`: the link in the reset mail. */
export function ResetPasswordPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const [password, setPassword] = useState('')
  const reset = useMutation({ mutationFn: () => call(api.POST('/auth/reset-password', { body: { token, new_password: password } })) })
  return (
    <AuthCard title="Choose a new password" footer={<a href="/app/login">Go to log in</a>}>
      {reset.isSuccess ? (
        <p role="status">{reset.data.message} You can now log in with your new password.</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            reset.mutate()
          }}
          noValidate
        >
          {!token && <ErrorBox error={new Error('This link has no token. Open the link from the mail again.')} />}
          <Field
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            hint="At least 8 characters."
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            error={fieldError(reset.error, 'new_password', 'password')}
          />
          <ErrorBox error={reset.error && !fieldError(reset.error, 'new_password', 'password') ? reset.error : null} />
          <Button type="submit" variant="primary" busy={reset.isPending} disabled={!token} className="btn-block">
            Save password
          </Button>
        </form>
      )}
    </AuthCard>
  )
}

/**
 * `/accept-invitation?token=`: the link in the invitation mail. The invitee chooses a password (or types
 * the one of their existing account) and joins; accepting signs them in.
 */
export function AcceptInvitationPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? ''
  const [password, setPassword] = useState('')
  const qc = useQueryClient()
  const [, navigate] = useLocation()
  const accept = useMutation({
    mutationFn: () => call(api.POST('/auth/accept-invitation', { body: { token, ...(password ? { password } : {}) } })),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['me'] })
      navigate('~/app/')
    },
  })
  const pErr = fieldError(accept.error, 'password')
  return (
    <AuthCard title="Join your team" footer={<a href="/app/login">Already joined? Log in</a>}>
      <p>You were invited to a support workspace. Choose a password to join it; you sign in with this address and password from now on.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          accept.mutate()
        }}
        noValidate
      >
        {!token && <ErrorBox error={new Error('This link has no token. Open the link from the invitation mail again.')} />}
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          hint="At least 8 characters. If you already have an account with this address, type its password."
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={pErr}
        />
        <ErrorBox error={accept.error && !pErr ? accept.error : null} />
        <Button type="submit" variant="primary" busy={accept.isPending} disabled={!token} className="btn-block">
          Join the workspace
        </Button>
      </form>
    </AuthCard>
  )
}
