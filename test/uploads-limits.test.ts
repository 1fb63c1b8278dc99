import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { startApp, type TestApp } from './helpers/app.js'
import { upload } from './helpers/documents.js'
import { createTenant } from './helpers/factories.js'

let t: TestApp
beforeAll(async () => {
  t = await startApp({ env: { UPLOAD_RATE_PER_HOUR: '25' } })
})
afterAll(() => t?.close())

describe('upload rate limit per tenant', () => {
  it('defaults to 200 an hour (a docs folder goes through at once) and follows UPLOAD_RATE_PER_HOUR', () => {
    expect(loadConfig({ JWT_SECRET: 'j'.repeat(40), ENCRYPTION_KEY: 'ab'.repeat(32) }, () => {}).UPLOAD_RATE_PER_HOUR).toBe(200)
  })

  it('accepts a folder of 25 files in a row, refuses the 26th with the contract 429, and counts per tenant', async () => {
    const owner = await createTenant(t)
    const statuses: number[] = []
    for (let i = 0; i < 25; i++) statuses.push((await upload(owner.api, `page-${i}.txt`, `Page ${i} of the help centre explains topic number ${i}.`)).status)
    expect(statuses).toEqual(Array(25).fill(201))
    const refused = await upload(owner.api, 'one-too-many.txt', 'One file too many for this hour.')
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: 'Rate limit exceeded: 25 per 1 hour' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000)
    // another tenant has its own allowance
    const other = await createTenant(t)
    expect((await upload(other.api, 'first.txt', 'The first file of another tenant.')).status).toBe(201)
  })
})
