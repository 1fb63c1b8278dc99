import { createRequire } from 'node:module'

/**
 * Route schemas compiled on first use instead of at boot. Fastify compiles every route's validators (ajv) and
 * response serializers (fast-json-stringify) while the app gets ready: with some 300 routes that was about 2 s
 * of a warm start's CPU (ajv 1.2 s, fast-json-stringify 1.0 s in a --cpu-prof of the built server), spent
 * before the first request could be answered, for routes most processes never see. Each compile is now
 * deferred to the route's first request of that part (or status code), with the same compiler and options; the
 * function is compiled once and then called directly.
 *
 * A schema that does not compile would now fail at its first request instead of at boot, so `compileAll`
 * compiles every deferred one (test/lazy-schemas.test.ts does, on the whole app).
 */
type Route = { schema?: unknown; httpPart?: string; url?: string; method?: string; httpStatus?: string }
type Compiler<F> = (route: Route) => F
type Builder<F> = (externalSchemas: unknown, options: unknown) => Compiler<F>
type Validate = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown }
type Serialize = (data: unknown) => string

export interface LazySchemas {
  buildValidator: Builder<Validate>
  buildSerializer: Builder<Serialize>
  /** Compiles every schema not compiled yet; throws the first compile error, naming its route. */
  compileAll(): void
  /** Compiles up to `n` schemas not compiled yet (a failing one is left for its first request); true while some remain. */
  compileSome(n: number): boolean
}

// Fastify's own default serializer builder, resolved from fastify's dependencies (it is not one of ours).
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'))
const defaultSerializers = (): Builder<Serialize> =>
  (fastifyRequire('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => Builder<Serialize> }).SerializerSelector()

function once<F>(made: Map<string, F>, key: string, make: () => F): F {
  let fn = made.get(key)
  if (fn === undefined) {
    fn = make()
    made.set(key, fn)
  }
  return fn
}

export function lazySchemas(buildValidator: Builder<Validate>, buildSerializer: Builder<Serialize> = defaultSerializers()): LazySchemas {
  const pending = new Set<() => unknown>()
  // One serializer per distinct response schema (with the same external schemas and options), shared by the routes
  // that declare it: fast-json-stringify's output is a function of those alone. Built anew for every route and status
  // code, each schema with anyOf kept an ajv instance of its own: 1,170 of them, 37 MB of a process's heap once all
  // were compiled (116 distinct schemas). Validators need no such map: ajv-compiler's one ajv per context did not grow.
  const serializers = new Map<string, Serialize>()
  const deferred = <F>(compile: () => F, route: Route) => {
    let fn: F | undefined
    const get = (): F => {
      if (fn === undefined) {
        try {
          fn = compile()
        } catch (err) {
          throw new Error(`${route.method} ${route.url} ${route.httpPart ?? route.httpStatus}: ${(err as Error).message}`)
        }
        pending.delete(get)
      }
      return fn
    }
    pending.add(get)
    return get
  }
  return {
    buildValidator(externalSchemas, options) {
      const compiler = buildValidator(externalSchemas, options)
      return (route) => {
        const get = deferred(() => compiler(route), route)
        const validate = ((data: unknown, ctx?: unknown) => get()(data, ctx)) as Validate
        // Fastify reads both off the function: schemaEnv before the call (ajv then may coerce the part
        // itself), errors after a failed one.
        Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv })
        Object.defineProperty(validate, 'errors', { get: () => get().errors })
        return validate
      }
    },
    buildSerializer(externalSchemas, options) {
      const compiler = buildSerializer(externalSchemas, options)
      const context = `${JSON.stringify(externalSchemas) ?? ''}\u0000${JSON.stringify(options) ?? ''}\u0000`
      return (route) => {
        const key = context + (JSON.stringify(route.schema) ?? '')
        const get = deferred(() => once(serializers, key, () => compiler(route)), route)
        return (data) => get()(data)
      }
    },
    compileAll() {
      for (const get of [...pending]) get()
    },
    compileSome(n) {
      // a compiled (or failing) entry leaves the set as it goes, so the next call starts where this one stopped
      let left = n
      for (const get of pending) {
        if (left-- <= 0) break
        try {
          get()
        } catch {
          pending.delete(get)
        }
      }
      return pending.size > 0
    },
  }
}
