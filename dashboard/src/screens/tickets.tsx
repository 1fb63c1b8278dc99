import { PageHeader } from '../ui/kit'

export default function Screen() {
  return <PageHeader title="tickets" />
}
