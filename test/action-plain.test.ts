import { describe, expect, it } from 'vitest'
import { addField, plainOf, sampleFields, schemaOf } from '../dashboard/src/screens/action-plain.js'
import { modelView } from '../src/modules/actions/actions.fns.js'

describe('action parameters as plain fields (issue 37: actions without a developer)', () => {
  it('reads a simple schema as type, description and pattern, and writes it back', () => {
    const schema = { type: 'string', description: 'The order number', pattern: '^ORD-[0-9]+$' }
    expect(plainOf(schema)).toEqual({ type: 'string', description: 'The order number', pattern: '^ORD-[0-9]+$' })
    expect(schemaOf(plainOf(schema)!)).toEqual(schema)
    expect(plainOf({})).toEqual({ type: 'string', description: '', pattern: '' })
    expect(schemaOf({ type: 'integer', description: ' ', pattern: 'x' })).toEqual({ type: 'integer' })
  })

  it('leaves a schema the plain fields cannot say to the JSON view', () => {
    expect(plainOf({ type: 'string', enum: ['a', 'b'] })).toBeNull()
    expect(plainOf({ type: 'object', properties: {} })).toBeNull()
    expect(plainOf({ type: 'integer', pattern: '^1' })).toBeNull()
    expect(plainOf(null)).toBeNull()
  })
})

describe('response fields picked from a sample answer', () => {
  const body = JSON.stringify({ status: 'shipped', items: [{ name: 'Lamp' }, { name: 'Desk' }], 'eta date': '2026-12-01', meta: { n: 2 }, tags: [] })

  it('lists each field once, lists as [*], odd keys quoted', () => {
    expect(sampleFields(body)).toEqual([
      { path: '$.status', preview: 'shipped' },
      { path: '$.items[*].name', preview: 'Lamp' },
      { path: "$['eta date']", preview: '2026-12-01' },
      { path: '$.meta.n', preview: '2' },
      { path: '$.tags', preview: '[]' },
    ])
    expect(sampleFields('not json')).toEqual([])
    expect(sampleFields(null)).toEqual([])
  })

  it('gives paths the service reads: a picked field reaches the model view', () => {
    const picked = sampleFields(body).map((f) => f.path)
    const view = JSON.parse(modelView(body, picked.slice(0, 3)))
    expect(view).toEqual({ status: 'shipped', 'items[*].name': ['Lamp', 'Desk'], "['eta date']": '2026-12-01' })
  })

  it('adds a clicked path once', () => {
    expect(addField('', '$.status')).toBe('$.status')
    expect(addField('$.status\n', '$.status')).toBe('$.status')
    expect(addField('$.status', '$.items[*].name')).toBe('$.status\n$.items[*].name')
  })
})
