import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useLocation } from 'wouter'
import { api, call } from '../api/client'
import { useBots } from '../session'
import { Badge, Button, Empty, ErrorBox, Field, fieldError, Loading, PageHeader, When } from '../ui/kit'

function CreateBot({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState('')
  const qc = useQueryClient()
  const [, navigate] = useLocation()
  const create = useMutation({
    mutationFn: () => call(api.POST('/bots', { body: { name: name.trim() } })),
    onSuccess: async (bot) => {
      await qc.invalidateQueries({ queryKey: ['bots'] })
      onDone()
      navigate(`/bots/${bot.id}`)
    },
  })
  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault()
        create.mutate()
      }}
      noValidate
    >
      <h2>New bot</h2>
      <Field label="Name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} error={fieldError(create.error, 'name')} autoFocus />
      <ErrorBox error={create.error && !fieldError(create.error, 'name') ? create.error : null} />
      <div className="row">
        <Button type="submit" variant="primary" busy={create.isPending}>
          Create bot
        </Button>
        <Button onClick={onDone}>Cancel</Button>
      </div>
    </form>
  )
}

export default function Bots() {
  const bots = useBots()
  const [creating, setCreating] = useState(false)
  return (
    <>
      <PageHeader title="Bots">
        {!creating && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New bot
          </Button>
        )}
      </PageHeader>
      {creating && <CreateBot onDone={() => setCreating(false)} />}
      {bots.isPending ? (
        <Loading />
      ) : bots.isError ? (
        <ErrorBox error={bots.error} retry={() => bots.refetch()} />
      ) : bots.data.items.length === 0 ? (
        <Empty title="No bots yet">
          <p>A bot is the chat you put on your site. Create one to get its embed snippet.</p>
        </Empty>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Public ID</th>
                <th scope="col">Allowed sites</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {bots.data.items.map((b) => (
                <tr key={b.id}>
                  <td>
                    <Link href={`/bots/${b.id}`}>{b.name}</Link>
                  </td>
                  <td>{b.is_active ? <Badge tone="ok">Active</Badge> : <Badge>Inactive</Badge>}</td>
                  <td>
                    <code>{b.public_id}</code>
                  </td>
                  <td>{b.allowed_domains.length ? b.allowed_domains.join(', ') : <span className="muted">any site</span>}</td>
                  <td>
                    <When at={b.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
