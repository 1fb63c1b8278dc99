import { describe, expect, it } from 'vitest'
import { cutBytes, maskSecret, modelView, parsePath, selectPath } from './actions.fns.js'
import { buildRequest, toolSchema } from './request.fns.js'
import { placeholders, render, unknownPlaceholders, urlTemplateProblem } from './templates.fns.js'

describe('JSONPath subset', () => {
  const doc = { a: { b: 1 }, items: [{ id: 1 }, { id: 2 }], 'odd key': true }
  it('selects members, indexes, wildcards and quoted keys', () => {
    expect(selectPath(doc, parsePath('$.a.b')!)).toBe(1)
    expect(selectPath(doc, parsePath('$.items[*].id')!)).toEqual([1, 2])
    expect(selectPath(doc, parsePath('$.items[1].id')!)).toBe(2)
    expect(selectPath(doc, parsePath("$['odd key']")!)).toBe(true)
    expect(selectPath(doc, parsePath('$.missing.x')!)).toBeUndefined()
    expect(parsePath('a.b')).toBeNull()
    expect(parsePath('$..deep')).toBeNull()
  })
  it('gives the model only the response fields, at most 8 KB', () => {
    expect(JSON.parse(modelView(JSON.stringify(doc), ['$.a.b', '$.items[*].id']))).toEqual({ 'a.b': 1, 'items[*].id': [1, 2] })
    expect(Buffer.byteLength(modelView(JSON.stringify({ x: 'é'.repeat(10_000) }), []))).toBeLessThanOrEqual(8192)
    expect(cutBytes('aé', 2)).toBe('a')
  })
})

describe('templates', () => {
  it('encodes each value for where it goes', () => {
    expect(placeholders('/a/{x}/{y}?q={x}')).toEqual(['x', 'y'])
    expect(render('/orders/{id}', { id: '1/../admin?x=1' }, 'url')).toBe('/orders/1%2F..%2Fadmin%3Fx%3D1')
    expect(render('Bearer {t}', { t: 'a\r\nX-Evil: 1' }, 'header')).toBe('Bearer a  X-Evil: 1')
    expect(render('{"a": "{v}", "n": {n}, "m": {m}}', { v: 'x", "admin": "true', n: 5 }, 'body')).toBe('{"a": "x\\", \\"admin\\": \\"true", "n": 5, "m": null}')
  })
  it('names an unknown placeholder and refuses a parameter in the host', () => {
    expect(unknownPlaceholders({ url: 'https://x.test/{a}', headers: { H: '{b}' }, body_template: null }, new Set(['a']))).toEqual({
      loc: ['headers', 'H'],
      name: 'b',
    })
    expect(urlTemplateProblem('https://{tenant}.x.test/a', false)).toMatch(/host/)
    expect(urlTemplateProblem('/relative', false)).toMatch(/absolute/)
    expect(urlTemplateProblem('/relative', true)).toBeNull()
    expect(urlTemplateProblem('ftp://x.test', true)).toMatch(/https/)
  })
})

describe('requests', () => {
  const action = {
    method: 'GET',
    url: 'https://api.test/u/{uid}/o/{order}',
    headers: { Authorization: 'Bearer {token}' },
    body_template: null,
    parameters: [
      { name: 'order', source: 'model' as const, schema: { type: 'string', pattern: '^[0-9]+$' }, claim: null, value: null, required: true },
      { name: 'uid', source: 'visitor' as const, schema: { type: 'string' }, claim: 'user_id', value: null, required: true },
      { name: 'token', source: 'secret' as const, schema: { type: 'string' }, claim: null, value: null, required: true },
    ],
  }
  it('takes a visitor parameter from the claims only, and masks secrets', () => {
    const b = buildRequest(action, { order: '12', uid: '42' }, { user_id: 'u-1' }, { token: 'sk_secret_abcd' })
    expect(b.ok && b.request.url).toBe('https://api.test/u/u-1/o/12')
    expect(b.ok && b.masked.headers.Authorization).toBe(`Bearer ${maskSecret('sk_secret_abcd')}`)
    expect(b.ok && b.logArgs).toEqual({ order: '12', uid: '[visitor:user_id]' })
    expect(buildRequest(action, { order: '12' }, null, { token: 'sk_secret_abcd' })).toMatchObject({ ok: false, argument: 'uid' })
    expect(buildRequest(action, { order: 'x' }, { user_id: 'u' }, { token: 't' })).toMatchObject({ ok: false, argument: 'order' })
  })
  it('offers the model its own parameters only', () => {
    expect(toolSchema(action.parameters)).toEqual({
      type: 'object',
      properties: { order: { type: 'string', pattern: '^[0-9]+$' } },
      required: ['order'],
      additionalProperties: false,
    })
  })
})
