import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { generateApiTypes } from '../scripts/gen-api.js'

// The dashboard's client is typed from this file; a route schema change must come with `npm run gen:api`,
// after which `tsc -p dashboard` (part of `npm test`) shows every screen the change breaks.
it('dashboard API types match the service OpenAPI document', async () => {
  const { types } = await generateApiTypes()
  const checkedIn = readFileSync(join(import.meta.dirname, '..', 'dashboard', 'src', 'api', 'schema.d.ts'), 'utf8')
  expect(checkedIn === types, 'dashboard/src/api/schema.d.ts is stale: run `npm run gen:api`').toBe(true)
}, 60_000)
