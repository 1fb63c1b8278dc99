import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { CONFIG_KEYS } from '../src/config.js'

/**
 * No container engine runs here, so the Dockerfile and compose.yaml are checked for what drifts silently:
 * every variable compose gives the service is one src/config.ts reads, and every command the image or compose
 * runs is the built half of an npm script (so `npm start` and the container run the same thing).
 */
const compose = parse(readFileSync('compose.yaml', 'utf8'), { merge: true }) as {
  services: Record<string, { build?: string; image?: string; command?: string[]; environment?: Record<string, string> }>
}
const dockerfile = readFileSync('Dockerfile', 'utf8')
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts
/** Each step of each npm script (`a && b` is two), so a container command can be matched to one. */
const scriptSteps = Object.values(scripts).flatMap((s) => s.split('&&').map((p) => p.trim()))
const ours = Object.entries(compose.services).filter(([, s]) => s.build === '.')

describe('compose.yaml', () => {
  it('has the production-like stack: PostgreSQL with pgvector, Redis, a mail catcher, the API and a separate worker', () => {
    const images = Object.values(compose.services).map((s) => s.image ?? '')
    expect(images.some((i) => i.startsWith('pgvector/pgvector'))).toBe(true)
    expect(images.some((i) => i.startsWith('redis'))).toBe(true)
    expect(images.some((i) => i.includes('mailpit'))).toBe(true)
    expect(ours.map(([name]) => name).sort()).toEqual(['api', 'worker'])
    expect(compose.services.api!.environment!.RUN_WORKER).toBe('false')
    // several HTTP processes on PostgreSQL, counted explicitly: the cores Node sees may be the host's
    expect(compose.services.api!.environment!.WEB_CONCURRENCY).toMatch(/^\$\{WEB_CONCURRENCY:-\d+\}$/)
  })

  it('sets only variables that src/config.ts reads', () => {
    for (const [name, service] of ours) {
      const keys = Object.keys(service.environment ?? {})
      expect(keys.length, name).toBeGreaterThan(5)
      for (const key of keys) expect(CONFIG_KEYS, `${name}: ${key}`).toContain(key)
    }
  })

  it('runs commands that package.json scripts run, on files the build produces', () => {
    for (const [name, service] of ours) {
      const command = service.command!.join(' ')
      expect(scriptSteps, name).toContain(command)
      const entry = service.command!.find((p) => p.startsWith('dist/src/'))!
      expect(existsSync(entry.replace(/^dist\//, '').replace(/\.js$/, '.ts')), entry).toBe(true)
    }
    expect(compose.services.worker!.command!.join(' ')).toBe(scripts.worker!.split('&&').pop()!.trim())
  })
})

describe('Dockerfile', () => {
  it('is multi-stage, runs as a non-root user, has a health check and runs what npm start runs after building', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2)
    expect(dockerfile).toMatch(/^USER node$/m)
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health/m)
    expect(dockerfile).toContain('RUN npm run build')
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[]
    expect(cmd.join(' ')).toBe(scripts.start!.split('&&').pop()!.trim())
  })
})
