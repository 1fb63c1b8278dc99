import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Redirect, Route, Switch } from 'wouter'
import { ApiError } from './api/client'
import { AppRoutes } from './routes'
import { AcceptInvitationPage, ResetPasswordPage, VerifyPage } from './screens/auth'
import { ToastProvider } from './ui/toast'
// uPlot's stylesheet (1.5 KB) goes with the shell's CSS: the page links only the first screen's styles, so
// CSS imported by a lazy screen (Insights) would never be loaded.
import 'uplot/dist/uPlot.min.css'
import './styles.css'

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({
    // A session that ends while the app is open sends the operator back to the login screen.
    onError: (err) => {
      if (err instanceof ApiError && err.status === 401) queryClient.setQueryData(['me'], null)
      // A 403 may mean an owner or admin just changed this member's role: read it again, so menus follow.
      else if (err instanceof ApiError && err.status === 403) void queryClient.invalidateQueries({ queryKey: ['me'] })
    },
  }),
  defaultOptions: {
    queries: { retry: (n, err) => !(err instanceof ApiError && err.status >= 400 && err.status < 500) && n < 2, refetchOnWindowFocus: true },
  },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <Switch>
          {/* The verification, reset and invitation mails link to these paths (contract, "Later decisions", "Team workspace"). */}
          <Route path="/verify" component={VerifyPage} />
          <Route path="/reset-password" component={ResetPasswordPage} />
          <Route path="/accept-invitation" component={AcceptInvitationPage} />
          <Route path="/app" nest>
            <AppRoutes />
          </Route>
          <Route>
            <Redirect to="/app/" />
          </Route>
        </Switch>
      </ToastProvider>
    </QueryClientProvider>
  </StrictMode>,
)
