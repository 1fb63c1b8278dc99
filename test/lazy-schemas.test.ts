import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { compileRouteSchemas } from '../src/app.js'
import { lazySchemas } from '../src/http/lazy-schemas.js'
import { startApp, type TestApp } from './helpers/app.js'

/**
 * Route schemas are compiled at each route's first request instead of at boot (src/http/lazy-schemas.ts). A
 * schema that cannot compile no longer stops the boot, so this compiles every route's schemas of the whole app;
 * and a deferred validator and serializer behave as eager ones: coercion, defaults, errors, response filtering.
 */
let t: TestApp
beforeAll(async () => {
  t = await startApp({ worker: false })
})
afterAll(() => t?.close())

it("every route's validators and serializers of the whole app compile", () => {
  expect(() => compileRouteSchemas(t.app)).not.toThrow()
})

it('a deferred validator coerces, fills defaults and reports errors; a deferred serializer drops unknown fields', async () => {
  const compiled: string[] = []
  const { default: AjvCompiler } = await import('@fastify/ajv-compiler')
  const inner = AjvCompiler()
  const schemas = lazySchemas((ext, opts) => {
    const compile = inner(ext as never, opts as never)
    return (route) => {
      compiled.push(`${route.method} ${route.httpPart}`)
      return compile(route as never) as never
    }
  })
  const app = Fastify({
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true } },
    schemaController: { compilersFactory: { buildValidator: schemas.buildValidator as never, buildSerializer: schemas.buildSerializer as never } },
  })
  app.get(
    '/n/:id',
    {
      schema: {
        params: Type.Object({ id: Type.Integer() }),
        querystring: Type.Object({ tags: Type.Array(Type.String()), limit: Type.Integer({ default: 7 }) }),
        response: { 200: Type.Object({ id: Type.Integer(), tags: Type.Array(Type.String()), limit: Type.Integer() }) },
      },
    },
    async (req) => ({ ...(req.params as object), ...(req.query as object), secret: 'not in the schema' }),
  )
  await app.ready()
  expect(compiled).toEqual([])
  const ok = await app.inject({ url: '/n/5?tags=a' })
  expect(ok.json()).toEqual({ id: 5, tags: ['a'], limit: 7 })
  expect([...compiled].sort()).toEqual(['GET params', 'GET querystring'])
  const bad = await app.inject({ url: '/n/x?tags=a' })
  expect(bad.statusCode).toBe(400)
  expect(bad.json().message).toMatch(/params\/id must be integer/)
  expect(() => schemas.compileAll()).not.toThrow()
  await app.close()
})

it('a schema that cannot compile is named by compileAll', () => {
  const schemas = lazySchemas(
    () => () => {
      throw new Error('unknown keyword')
    },
    () => () => () => '',
  )
  const validate = schemas.buildValidator(undefined, undefined)({ method: 'POST', url: '/x', httpPart: 'body', schema: {} })
  expect(() => schemas.compileAll()).toThrow('POST /x body: unknown keyword')
  expect(() => validate({})).toThrow('unknown keyword')
})

it('compileSome compiles a few at a time and leaves a failing one to its first request', () => {
  let compiled = 0
  const schemas = lazySchemas(
    () => (route) => {
      if (route.url === '/bad') throw new Error('unknown keyword')
      compiled++
      return () => true
    },
    () => () => () => '',
  )
  const build = schemas.buildValidator(undefined, undefined)
  const routes = ['/a', '/bad', '/b', '/c'].map((url) => build({ method: 'GET', url, httpPart: 'querystring', schema: {} }))
  expect(schemas.compileSome(2)).toBe(true)
  expect(compiled).toBe(1)
  expect(schemas.compileSome(10)).toBe(false)
  expect(compiled).toBe(3)
  expect(routes[0]!({})).toBe(true)
  expect(() => routes[1]!({})).toThrow('unknown keyword')
})

it('routes that declare the same response schema share one serializer; another schema gets its own', async () => {
  const { SerializerSelector } = (await import('@fastify/fast-json-stringify-compiler')) as unknown as {
    SerializerSelector: () => (ext: unknown, opts: unknown) => (route: unknown) => (data: unknown) => string
  }
  let built = 0
  const inner = SerializerSelector()
  const schemas = lazySchemas(
    () => () => () => true,
    (ext, opts) => {
      const compile = inner(ext, opts)
      return (route) => {
        built++
        return compile(route)
      }
    },
  )
  const build = schemas.buildSerializer({}, {})
  // equal schemas as distinct objects, as each route's module writes its own (anyOf: each build kept an ajv of its own)
  const item = () => Type.Object({ id: Type.String(), note: Type.Union([Type.String(), Type.Null()]) })
  const a = build({ method: 'GET', url: '/a', httpStatus: '200', schema: item() })
  const b = build({ method: 'GET', url: '/b', httpStatus: '200', schema: item() })
  const c = build({ method: 'GET', url: '/c', httpStatus: '200', schema: Type.Object({ id: Type.Integer() }) })
  expect(JSON.parse(a({ id: 'x', note: null, secret: 1 }))).toEqual({ id: 'x', note: null })
  expect(JSON.parse(b({ id: 'y', note: 'n' }))).toEqual({ id: 'y', note: 'n' })
  expect(built).toBe(1)
  expect(JSON.parse(c({ id: 3, note: 'dropped' }))).toEqual({ id: 3 })
  expect(built).toBe(2)
  schemas.compileAll()
  expect(built).toBe(2)
})
