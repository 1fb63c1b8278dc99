import { useRole } from '../session'
import { AlertPrefsForm } from '../ui/inbox-alerts'
import { PageHeader } from '../ui/kit'
import { MyDisplayName } from './my-name'
import { AssignmentMailPref } from './ticket-assignee'

/**
 * The member's own settings (#52), off the Tickets page so the inbox opens on tickets: the name visitors see,
 * the mail for an assigned ticket, this browser's alerts.
 */
export default function MyProfile() {
  const { me, may } = useRole()
  return (
    <>
      <PageHeader title="Your profile" />
      <p className="hint">{me?.email}: settings of yours alone; the rest of the team keeps theirs.</p>
      <section className="card" aria-labelledby="my-name-title">
        <h2 id="my-name-title">Your name</h2>
        <MyDisplayName />
      </section>
      {may('tickets') && (
        <section className="card" aria-labelledby="my-alerts-title">
          <h2 id="my-alerts-title">Tickets</h2>
          <AssignmentMailPref />
          <AlertPrefsForm />
        </section>
      )}
    </>
  )
}
