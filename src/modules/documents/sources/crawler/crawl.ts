import { createHash, randomUUID } from 'node:crypto'
import type { Insertable } from 'kysely'
import type { Db } from '../../../../db/client.js'
import { PG_FOREIGN_KEY_VIOLATION, pgCode } from '../../../../db/errors.js'
import type { DocumentsTable } from '../../../../db/schema/ingestion.js'
import type { CrawlQueueState } from '../../../../db/schema/sources.js'
import { enqueueIndex } from '../../documents.service.js'
import type { PageRow, PageUpsert, QueueEntry, RunRow, SourceRow } from '../sources.repo.js'
import { CrawlInterrupted, type CrawlerDeps, type Visit } from './crawl.types.js'
import { ALREADY_VISITED, OFF_SITE } from './fetcher.js'
import { frontierEntries, isTransientFailure, nextCrawlAt, siteLinks, type FrontierScope } from './frontier.fns.js'
import { pageContent } from './page-content.js'
import { RobotsCache } from './robots.js'
import { discoverSitemaps } from './sitemaps.js'
import { compileExclusions, pageLabel, sameSite, siteKey } from './url.fns.js'

const MAX_FAILED_URLS = 500
const SOURCE_CHECK_MS = 1000
const FRONTIER_SLICE = 64
const BATCH_WAIT_MS = 20

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')

/**
 * One crawl of one source, as a resumable loop over the persisted frontier: fetch a window of pending
 * URLs concurrently, and record each result in its own transaction (page document + page row + queue
 * state + new links + index job), so a crash loses at most the fetches in flight and never half a page.
 */
export function createCrawler(deps: CrawlerDeps) {
  const { db, repo, fetcher, queue, clock, log, settings } = deps

  async function startRun(source: SourceRow): Promise<RunRow | null> {
    return db.transaction().execute(async (trx) => {
      const locked = await repo.lockSource(source.tenant_id, source.id, trx)
      if (!locked || locked.paused) return null
      const existing = await repo.activeRun(source.tenant_id, source.id, trx)
      if (existing) return existing
      const now = clock.now()
      const run = await repo.insertRun(
        source.tenant_id,
        { source_id: source.id, trigger: locked.pending_trigger, site: siteKey(locked.url), failed_urls: '[]', error_message: null, created_at: now, finished_at: null },
        trx,
      )
      await repo.enqueueUrls(run.id, [{ url: locked.url, depth: 0 }], trx)
      await repo.updateSource(source.tenant_id, source.id, { status: 'indexing', updated_at: now }, trx)
      return run
    })
  }

  async function run(tenantId: string, sourceId: string, signal: AbortSignal): Promise<void> {
    const source = await repo.findSource(tenantId, sourceId)
    if (!source || source.paused) return
    let current: RunRow | null | undefined = await repo.activeRun(tenantId, sourceId)
    // Without a run in progress only a queued source starts one: a job re-run after its crawl finished
    // (a crash between the last commit and the job's completion) must not crawl again.
    if (!current && source.status !== 'queued') return
    current ??= await startRun(source)
    if (!current) return
    const runId = current.id
    const started = Date.now()
    const ownerExcluded = new Set<string>()
    const known = new Map<string, PageRow>()
    // Content already stored in this run, so two URLs serving one page keep one copy (also after a resume).
    const hashes = new Map<string, string>()
    // URLs fetched in this run, so a redirect to one of them is not followed again (claimVisited is the guard).
    const visited = new Set<string>()
    // Redirect targets already fetched in this run but not yet recorded: the loop does not fetch them again.
    const reached = new Set<string>()
    for (const p of await repo.pages(tenantId, sourceId)) {
      if (p.excluded) ownerExcluded.add(p.url)
      else known.set(p.url, p)
      if (p.last_seen_run_id === runId && p.content_hash) hashes.set(p.content_hash, p.url)
    }
    const scope: FrontierScope = {
      site: current.site,
      maxDepth: settings.maxDepth,
      isExcluded: compileExclusions(source.exclusion_patterns),
      ownerExcluded,
    }
    const robots = new RobotsCache(fetcher, settings.userAgent, signal)
    let limits = { maxPages: source.max_pages, tenantCapHit: 0 }

    if (!current.sitemap_done) await discoverSitemaps(deps, current, source, scope, robots, signal)

    // ---- visiting ----------------------------------------------------------------------------------
    async function hopCheck(url: string, depth: number): Promise<string | null> {
      if (visited.has(url) || reached.has(url) || inFlight.has(url)) return ALREADY_VISITED
      // Same-site redirects only, the start URL's too: following one to another host would index that
      // host's pages under this source (www. and http/https variants are one site, see siteKey).
      if (!sameSite(url, scope.site)) return OFF_SITE
      if (ownerExcluded.has(url) || scope.isExcluded(url)) return 'excluded'
      return (await robots.rules(url)).check(url)
    }

    async function visit(url: string, depth: number): Promise<Visit> {
      const v = await fetchAndExtract(url, depth)
      // Only results that claim their redirect target when recorded may keep the loop off that URL.
      if ((v.type === 'page' || v.type === 'skipped' || v.type === 'not_modified') && v.finalUrl !== url) reached.add(v.finalUrl)
      return v
    }

    async function fetchAndExtract(url: string, depth: number): Promise<Visit> {
      const rules = await robots.rules(url)
      const blocked = rules.check(url)
      if (blocked) return { type: 'failed', url, depth, reason: blocked, transient: /unavailable/.test(blocked) }
      const page = known.get(url)
      const res = await fetcher.fetch(url, {
        etag: page?.document_id ? page.etag : null,
        lastModified: page?.document_id ? page.last_modified : null,
        signal,
        delayMs: rules.delayMs,
        checkHop: (u) => hopCheck(u, depth),
      })
      if (res.kind === 'failed') return { type: 'failed', url, depth, reason: res.reason, transient: isTransientFailure(res.reason, res.status) }
      if (res.kind === 'known') return { type: 'known', url, depth }
      if (res.kind === 'not_modified') return { type: 'not_modified', url, finalUrl: res.url, depth, etag: res.etag, lastModified: res.lastModified }
      const content = await pageContent(deps, res)
      if (content.kind === 'failed') return { type: 'failed', url, depth, reason: content.reason, transient: false }
      const { title, markdown, links } = content
      if (content.kind === 'noindex') return { type: 'skipped', url, finalUrl: res.url, depth, reason: 'noindex', links }
      if (!markdown.trim()) return { type: 'skipped', url, finalUrl: res.url, depth, reason: 'no text content', links }
      return {
        type: 'page',
        url,
        finalUrl: res.url,
        depth,
        status: res.status,
        title,
        markdown,
        hash: sha256(markdown),
        links,
        etag: res.etag,
        lastModified: res.lastModified,
      }
    }

    // ---- recording ---------------------------------------------------------------------------------
    // Fetches run concurrently; their results are written by one writer, a batch of whatever has arrived
    // per transaction. Pages of one crawl never contend for the same rows (tenant lock, queue rows, run
    // counters), the in-memory state follows commit order, and a fast site costs one commit per batch
    // rather than per page. A visit's promise resolves when its batch is committed.
    let pending: { v: Visit; resolve: () => void; reject: (e: unknown) => void }[] = []
    let flushing = false
    function record(v: Visit): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        pending.push({ v, resolve, reject })
        kick()
      })
    }
    let flushTimer: NodeJS.Timeout | null = null
    function kick(): void {
      if (flushing || pending.length === 0) return
      // Wait (briefly) for the other fetches in flight to land in the same batch: a commit per page costs
      // more than the whole fetch and extraction of a page on a local site.
      if (pending.length < inFlight.size) {
        flushTimer ??= setTimeout(() => {
          flushTimer = null
          flush()
        }, BATCH_WAIT_MS)
        return
      }
      flush()
    }
    function flush(): void {
      if (flushing || pending.length === 0) return
      if (flushTimer) clearTimeout(flushTimer)
      flushTimer = null
      flushing = true
      const batch = pending
      pending = []
      recordBatch(batch.map((b) => b.v))
        .then(
          () => batch.forEach((b) => b.resolve()),
          (err) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          flushing = false
          kick()
        })
    }

    interface Batch {
      trx: Db
      now: Date
      found: number
      indexed: number
      unchanged: number
      states: Map<string, { state: CrawlQueueState; reason: string | null }>
      links: Map<string, QueueEntry>
      /** Documents of the tenant, counted once per batch when a new page needs room. */
      tenantDocs: number | null
      /** Written at the end of the batch, a statement for all. */
      newDocuments: Insertable<DocumentsTable>[]
      pages: Map<string, PageUpsert>
      toIndex: string[]
    }

    async function recordBatch(visits: Visit[]): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const b: Batch = {
          trx,
          now: clock.now(),
          found: 0,
          indexed: 0,
          unchanged: 0,
          states: new Map(),
          links: new Map(),
          tenantDocs: null,
          newDocuments: [],
          pages: new Map(),
          toIndex: [],
        }
        for (const v of visits) await recordOne(v, b)
        await repo.insertDocuments(tenantId, b.newDocuments, trx)
        await repo.upsertPages(tenantId, sourceId, [...b.pages.values()], trx)
        for (const documentId of b.toIndex) await enqueueIndex(queue, tenantId, documentId, trx)
        await repo.setQueueStates(runId, [...b.states].map(([url, s]) => ({ url, ...s })), trx)
        // Links go in after the states: a link to a URL this batch just finished is already in the queue.
        if (b.links.size) await repo.enqueueUrls(runId, [...b.links.values()], trx)
        if (b.found) current = await repo.addToRun(tenantId, runId, { found: b.found, indexed: b.indexed, unchanged: b.unchanged }, trx)
      })
    }

    async function recordOne(v: Visit, b: Batch): Promise<void> {
      const { trx, now } = b
      const state = (url: string, st: CrawlQueueState, reason: string | null = null): void => void b.states.set(url, { state: st, reason })
      const seen = (url: string, values: Partial<Pick<PageRow, 'etag' | 'last_modified' | 'content_hash' | 'document_id' | 'last_status' | 'links'>>) => {
        const prev = known.get(url)
        const links = values.links ?? prev?.links ?? []
        const row = {
          links: JSON.stringify(links),
          document_id: values.document_id !== undefined ? values.document_id : (prev?.document_id ?? null),
          etag: values.etag !== undefined ? values.etag : (prev?.etag ?? null),
          last_modified: values.last_modified !== undefined ? values.last_modified : (prev?.last_modified ?? null),
          content_hash: values.content_hash !== undefined ? values.content_hash : (prev?.content_hash ?? null),
          last_status: values.last_status !== undefined ? values.last_status : (prev?.last_status ?? null),
          last_seen_run_id: runId,
          updated_at: now,
        }
        known.set(url, { ...(prev ?? { id: '', tenant_id: tenantId, source_id: sourceId, url, excluded: false, created_at: now }), ...row, links })
        b.pages.set(url, { url, ...row })
      }

      if (v.type === 'known') return state(v.url, 'done')
      if (v.type === 'failed') {
        state(v.url, 'failed', v.reason)
        // A page that timed out keeps its content; one that is gone is removed when the run ends.
        if (v.transient && known.get(v.url)?.document_id) seen(v.url, {})
        return
      }

      // A redirect lands on a URL the run may already have (or will meet later): store it once. `visited`
      // covers this process (and this batch); claimVisited the rows committed before a restart.
      state(v.url, 'done')
      const url = v.finalUrl
      if (visited.has(url)) return
      if (url !== v.url) {
        if (!(await repo.claimVisited(runId, url, v.depth, trx))) return
      }
      visited.add(url)

      if (v.type === 'skipped') {
        state(v.url, 'skipped', v.reason)
      } else if (v.type === 'not_modified') {
        if (known.get(url)?.document_id) {
          seen(url, { etag: v.etag, last_modified: v.lastModified, last_status: 304 })
          b.found++
          b.unchanged++
        }
      } else {
        const prev = known.get(url)
        const duplicateOf = hashes.get(v.hash)
        if (duplicateOf && duplicateOf !== url) {
          state(v.url, 'skipped', `duplicate of ${duplicateOf}`)
        } else if (prev?.document_id && prev.content_hash === v.hash) {
          seen(url, { etag: v.etag, last_modified: v.lastModified, last_status: v.status, links: siteLinks(v.links, scope.site) })
          hashes.set(v.hash, url)
          b.found++
          b.unchanged++
        } else {
          const doc = {
            filename: (v.title ?? pageLabel(url)).slice(0, 255),
            title: v.title,
            source_url: url,
            parsed_text: v.markdown,
            content_hash: v.hash,
            size_bytes: Buffer.byteLength(v.markdown),
            status: 'processing' as const,
            error_message: null,
            updated_at: now,
          }
          let documentId = prev?.document_id ? ((await repo.updateDocument(tenantId, sourceId, prev.document_id, doc, trx))?.id ?? null) : null
          if (!documentId) {
            const refusal = await newPageRefusal(b)
            if (refusal) return state(v.url, 'skipped', refusal)
            documentId = randomUUID()
            b.newDocuments.push({ ...doc, id: documentId, tenant_id: tenantId, file_type: 'url', source_id: sourceId, lang: null, indexed_at: null, created_at: now })
            b.tenantDocs!++
          }
          seen(url, { document_id: documentId, etag: v.etag, last_modified: v.lastModified, content_hash: v.hash, last_status: v.status, links: siteLinks(v.links, scope.site) })
          b.toIndex.push(documentId)
          hashes.set(v.hash, url)
          b.found++
          b.indexed++
        }
      }
      // A 304 has no body: the links remembered from the page's last fetch lead the crawl on.
      const links = v.type === 'not_modified' ? (known.get(url)?.links ?? []) : v.links
      for (const e of frontierEntries(links, v.depth + 1, scope)) if (!b.links.has(e.url)) b.links.set(e.url, e)
    }

    /** Why a new page cannot be added (page cap of the source, document capacity of the tenant), or null. */
    async function newPageRefusal(b: Batch): Promise<string | null> {
      if (current!.pages_found + b.found >= limits.maxPages) return `page limit of ${limits.maxPages} reached`
      if (b.tenantDocs === null) {
        // Uploads take the same lock, so files and pages cannot overshoot the limit together.
        await repo.lockTenant(tenantId, b.trx)
        b.tenantDocs = await repo.countTenantDocuments(tenantId, b.trx)
      }
      if (b.tenantDocs >= settings.maxDocumentsPerTenant) {
        limits.tenantCapHit++
        return `document limit of ${settings.maxDocumentsPerTenant} per account reached`
      }
      return null
    }

    // ---- the loop ----------------------------------------------------------------------------------
    const inFlight = new Map<string, Promise<void>>()
    const inFlightDepth = new Map<string, number>()
    let frontier: { url: string; depth: number }[] = []
    let failure: unknown = null
    let lastSourceCheck = 0
    let stop: 'deleted' | 'paused' | null = null
    while (!signal.aborted && !failure) {
      if (Date.now() - lastSourceCheck > SOURCE_CHECK_MS) {
        lastSourceCheck = Date.now()
        const fresh = await repo.findSource(tenantId, sourceId)
        if (!fresh) stop = 'deleted'
        else if (fresh.paused) stop = 'paused'
        else limits = { ...limits, maxPages: fresh.max_pages }
        if (stop) break
      }
      const room = Math.min(settings.concurrency - inFlight.size, limits.maxPages - current.pages_found - inFlight.size)
      let skippedOnly = false
      if (room > 0) {
        // The frontier is read ahead in slices, so the loop does not wait on the database for every URL.
        if (frontier.length < room) {
          frontier = (await repo.nextPending(runId, FRONTIER_SLICE + inFlight.size)).filter((r) => !inFlight.has(r.url) && !visited.has(r.url) && !reached.has(r.url))
        }
        // Level by level: a page starts only when no shallower page is still being read, so every URL is
        // first found by its shortest path and gets its true depth (whatever the fetch and parse timings).
        const level = Math.min(...inFlightDepth.values(), frontier[0]?.depth ?? Infinity)
        let take = 0
        while (take < room && take < frontier.length && frontier[take]!.depth <= level) take++
        const rows = frontier.splice(0, take).filter((r) => !inFlight.has(r.url) && !visited.has(r.url) && !reached.has(r.url))
        if (rows.length === 0 && take > 0) continue
        for (const row of rows) {
          // At the account's document limit only pages the source already has are worth fetching.
          if (limits.tenantCapHit && !known.get(row.url)?.document_id) {
            await record({ type: 'failed', url: row.url, depth: row.depth, reason: `document limit of ${settings.maxDocumentsPerTenant} per account reached`, transient: false })
            skippedOnly = true
            continue
          }
          const p = visit(row.url, row.depth)
            .then((v) => record(v))
            .catch((err) => {
              if (!signal.aborted) failure ??= err
            })
            .finally(() => {
              inFlight.delete(row.url)
              inFlightDepth.delete(row.url)
            })
          inFlight.set(row.url, p)
          inFlightDepth.set(row.url, row.depth)
        }
      }
      if (inFlight.size === 0) {
        if (skippedOnly) continue
        break
      }
      await Promise.race(inFlight.values())
    }
    await Promise.allSettled(inFlight.values())
    if (stop === 'deleted') return
    if (signal.aborted) throw new CrawlInterrupted()
    if (failure) {
      // The source was deleted while a page was being recorded: nothing left to finish.
      if (pgCode(failure) === PG_FOREIGN_KEY_VIOLATION && !(await repo.findSource(tenantId, sourceId))) return
      throw failure
    }
    await finish(stop === 'paused', Date.now() - started)

    async function finish(cancelled: boolean, ms: number): Promise<void> {
      const now = clock.now()
      const pendingLeft = (await repo.nextPending(runId, 1)).length > 0
      const capReached = !cancelled && pendingLeft
      if (capReached) await repo.skipPending(runId, limits.tenantCapHit ? 'document limit reached' : `page limit of ${limits.maxPages} reached`)
      const failed = await repo.failures(runId, MAX_FAILED_URLS)
      const ok = current!.pages_found > 0
      await db.transaction().execute(async (trx) => {
        const locked = await repo.lockSource(tenantId, sourceId, trx)
        if (!locked) return
        let removed = 0
        if (ok && !cancelled) {
          const gone = await repo.unseenPages(tenantId, sourceId, runId, trx)
          await repo.deleteDocuments(tenantId, gone.map((g) => g.document_id).filter((id): id is string => !!id), trx)
          await repo.deletePages(tenantId, gone.map((g) => g.id), trx)
          removed = gone.filter((g) => g.document_id).length
        }
        const status = cancelled ? 'cancelled' : ok ? 'completed' : 'failed'
        const startFailure = failed.find((f) => f.url === locked.url)?.reason ?? failed[0]?.reason
        const errorMessage = ok || cancelled ? null : `No page could be crawled${startFailure ? `: ${startFailure}` : ''}`
        await repo.updateRun(
          tenantId,
          runId,
          { status, finished_at: now, cap_reached: capReached, pages_removed: removed, failed_urls: JSON.stringify(failed), error_message: errorMessage },
          trx,
        )
        const warnings: string[] = []
        if (limits.tenantCapHit) warnings.push(`The account's limit of ${settings.maxDocumentsPerTenant} documents was reached; some pages were not added.`)
        else if (capReached) warnings.push(`The page limit of ${limits.maxPages} was reached; some pages were not crawled.`)
        await repo.updateSource(
          tenantId,
          sourceId,
          {
            status: cancelled ? (ok ? 'ready' : locked.status === 'indexing' ? 'queued' : locked.status) : ok ? 'ready' : 'error',
            error_message: errorMessage,
            warning_message: cancelled ? locked.warning_message : warnings.join(' ') || null,
            last_crawled_at: cancelled ? locked.last_crawled_at : now,
            next_crawl_at: locked.paused ? null : nextCrawlAt(locked.schedule, now),
            updated_at: now,
          },
          trx,
        )
        await repo.clearQueue(runId, trx)
        const data = { source_id: sourceId, run_id: runId, url: locked.url, error: errorMessage }
        if (status === 'failed') await deps.events?.emit(tenantId, { type: 'source.crawl_failed', botId: null, data }, trx)
      })
      log.info({ sourceId, runId, pages: current!.pages_found, failed: failed.length, ms }, 'crawl finished')
    }
  }

  return { run }
}

export type Crawler = ReturnType<typeof createCrawler>
