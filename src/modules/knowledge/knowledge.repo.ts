import type { ChangeFeed } from '../../db/change-feed.js'
import { sql } from 'kysely'
import type { Db } from '../../db/client.js'
import type { FaqSource, GlossaryEntry, ProfileField } from '../../db/schema/knowledge.js'

type Executor = Db

export interface ProfileWrite {
  product_name?: string | null
  topics?: string[]
  glossary?: GlossaryEntry[]
  support_email?: string | null
  support_urls?: string[]
  operator_fields?: ProfileField[]
  faq_auto_approve?: boolean
  extraction_status?: 'pending' | 'done' | 'failed'
  extraction_error?: string | null
  extracted_at?: Date | null
}

export interface NewFaq {
  question: string
  answer: string
  confidence: number | null
  source: FaqSource
  questionKey: string
  documentId: string | null
  approved: boolean
}

const FAQ_COLUMNS = ['id', 'question', 'answer', 'confidence', 'source', 'approved', 'document_id', 'question_key', 'created_at', 'updated_at'] as const

/** Change-feed topic of a tenant's knowledge profile (key: tenant id); content writes announce it. */
export const PROFILE_TOPIC = 'knowledge_profile'
/** Announced (key: tenant id) by every write to a tenant's FAQ candidates; the answer path caches the approved ones. */
export const FAQS_TOPIC = 'faqs'

/** A profile row that knows nothing yet (`dirtyAt`: a document changed and extraction is due). */
const emptyProfile = (tenantId: string, now: Date, dirtyAt: Date | null) => ({
  tenant_id: tenantId,
  topics: '[]',
  glossary: '[]',
  support_urls: '[]',
  operator_fields: '[]',
  product_name: null,
  support_email: null,
  dirty_at: dirtyAt,
  extracted_at: null,
  extraction_error: null,
  created_at: now,
  updated_at: now,
})

export function createKnowledgeRepo(db: Db, changes: ChangeFeed) {
  return {
    // --- profile ---
    findProfile(tenantId: string, trx: Executor = db) {
      return trx.selectFrom('knowledge_profiles').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst()
    },

    /** The tenant's profile row, created empty (pending) the first time it is asked for. */
    async ensureProfile(tenantId: string, now: Date, trx: Executor = db) {
      await trx
        .insertInto('knowledge_profiles')
        .values(emptyProfile(tenantId, now, null))
        .onConflict((oc) => oc.column('tenant_id').doNothing())
        .execute()
      return (await trx.selectFrom('knowledge_profiles').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst())!
    },

    /** Locks the row (inside a transaction) so a PATCH and an extraction do not interleave their read-modify-write. */
    lockProfile(tenantId: string, trx: Executor) {
      return trx.selectFrom('knowledge_profiles').selectAll().where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst()
    },

    async updateProfile(tenantId: string, w: ProfileWrite, now: Date, trx: Executor = db) {
      const set: Record<string, unknown> = { updated_at: now }
      if (w.product_name !== undefined) set.product_name = w.product_name
      if (w.topics !== undefined) set.topics = JSON.stringify(w.topics)
      if (w.glossary !== undefined) set.glossary = JSON.stringify(w.glossary)
      if (w.support_email !== undefined) set.support_email = w.support_email
      if (w.support_urls !== undefined) set.support_urls = JSON.stringify(w.support_urls)
      if (w.operator_fields !== undefined) set.operator_fields = JSON.stringify(w.operator_fields)
      if (w.faq_auto_approve !== undefined) set.faq_auto_approve = w.faq_auto_approve
      if (w.extraction_status !== undefined) set.extraction_status = w.extraction_status
      if (w.extraction_error !== undefined) set.extraction_error = w.extraction_error
      if (w.extracted_at !== undefined) set.extracted_at = w.extracted_at
      const row = await trx.updateTable('knowledge_profiles').set(set).where('tenant_id', '=', tenantId).returningAll().executeTakeFirst()
      await changes.announce(trx, PROFILE_TOPIC, tenantId)
      return row
    },

    /** A document changed: remember it, so the extraction (or the sweep) looks again. */
    async markDirty(tenantId: string, now: Date, trx: Executor = db) {
      await trx
        .insertInto('knowledge_profiles')
        .values(emptyProfile(tenantId, now, now))
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ dirty_at: now }))
        .execute()
    },

    /** Clears the dirty mark unless a document changed after `seenUpTo` (then the job runs again). */
    async clearDirty(tenantId: string, seenUpTo: Date, trx: Executor = db): Promise<boolean> {
      const r = await trx
        .updateTable('knowledge_profiles')
        .set({ dirty_at: null })
        .where('tenant_id', '=', tenantId)
        .where((eb) => eb.or([eb('dirty_at', 'is', null), eb('dirty_at', '<=', seenUpTo)]))
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },

    /** Not tenant-scoped on purpose: the sweep finds the tenants whose extraction is due. */
    dirtyTenants(before: Date, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('knowledge_profiles')
        .select('tenant_id')
        .where('dirty_at', 'is not', null)
        .where('dirty_at', '<=', before)
        .orderBy('dirty_at')
        .limit(limit)
        .execute()
        .then((rows) => rows.map((r) => r.tenant_id))
    },

    // --- documents the extraction reads ---
    /** Ready documents with the first `chars` of their text, and the content hash the FAQ extraction last read. */
    documents(tenantId: string, opts: { chars: number; limit: number; documentId?: string }, trx: Executor = db) {
      let q = trx
        .selectFrom('documents as d')
        .leftJoin('knowledge_documents as k', (j) => j.onRef('k.document_id', '=', 'd.id').on('k.tenant_id', '=', tenantId))
        .select([
          'd.id',
          'd.filename',
          'd.title',
          'd.file_type',
          'd.content_hash',
          'd.source_url',
          sql<string>`left(d.parsed_text, ${opts.chars})`.as('text'),
          'k.content_hash as extracted_hash',
        ])
        .where('d.tenant_id', '=', tenantId)
        .where('d.status', '=', 'ready')
        .orderBy('d.updated_at', 'desc')
        .orderBy('d.id')
        .limit(opts.limit)
      if (opts.documentId) q = q.where('d.id', '=', opts.documentId)
      return q.execute()
    },

    async markDocumentExtracted(tenantId: string, documentId: string, contentHash: string, now: Date, trx: Executor = db) {
      await trx
        .insertInto('knowledge_documents')
        .values({ tenant_id: tenantId, document_id: documentId, content_hash: contentHash, extracted_at: now })
        .onConflict((oc) => oc.columns(['tenant_id', 'document_id']).doUpdateSet({ content_hash: contentHash, extracted_at: now }))
        .execute()
    },

    // --- FAQ candidates ---
    async listFaq(tenantId: string, f: { approved: boolean | null; source: FaqSource | null; limit: number; offset: number }, trx: Executor = db) {
      let q = trx.selectFrom('faq_candidates').where('tenant_id', '=', tenantId).where('state', '=', 'active')
      if (f.approved !== null) q = q.where('approved', '=', f.approved)
      if (f.source) q = q.where('source', '=', f.source)
      const [items, total, pending] = await Promise.all([
        q.select(FAQ_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).offset(f.offset).execute(),
        q.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
        trx
          .selectFrom('faq_candidates')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('tenant_id', '=', tenantId)
          .where('state', '=', 'active')
          .where('approved', '=', false)
          .executeTakeFirstOrThrow(),
      ])
      return { items, total: total.n, pending: pending.n }
    },

    findFaq(tenantId: string, id: string, trx: Executor = db) {
      return trx
        .selectFrom('faq_candidates')
        .select(FAQ_COLUMNS)
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst()
    },

    async updateFaq(
      tenantId: string,
      id: string,
      set: { question?: string; answer?: string; questionKey?: string; approved?: boolean },
      now: Date,
      trx: Executor = db,
    ) {
      const row = await trx
        .updateTable('faq_candidates')
        .set({
          updated_at: now,
          ...(set.question !== undefined ? { question: set.question } : {}),
          ...(set.answer !== undefined ? { answer: set.answer } : {}),
          ...(set.questionKey !== undefined ? { question_key: set.questionKey } : {}),
          ...(set.approved !== undefined ? { approved: set.approved } : {}),
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .returning(FAQ_COLUMNS)
        .executeTakeFirst()
      if (row) await changes.announce(trx, FAQS_TOPIC, tenantId)
      return row
    },

    /** Reject or delete: the row stays as a tombstone, so the same candidate is not suggested again. */
    async tombstoneFaq(tenantId: string, id: string, state: 'rejected' | 'deleted', now: Date, trx: Executor = db): Promise<boolean> {
      const r = await trx
        .updateTable('faq_candidates')
        .set({ state, approved: false, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('state', '=', 'active')
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) === 0) return false
      await changes.announce(trx, FAQS_TOPIC, tenantId)
      return true
    },

    async approveAll(tenantId: string, now: Date, trx: Executor = db): Promise<number> {
      const r = await trx
        .updateTable('faq_candidates')
        .set({ approved: true, updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('state', '=', 'active')
        .where('approved', '=', false)
        .executeTakeFirst()
      if (Number(r.numUpdatedRows) > 0) await changes.announce(trx, FAQS_TOPIC, tenantId)
      return Number(r.numUpdatedRows)
    },

    /** Question keys of every candidate the tenant has or had (tombstones too), for de-duplication. */
    async faqKeys(tenantId: string, trx: Executor = db): Promise<string[]> {
      const rows = await trx.selectFrom('faq_candidates').select('question_key').where('tenant_id', '=', tenantId).limit(20_000).execute()
      return rows.map((r) => r.question_key)
    },

    async insertFaqs(tenantId: string, rows: NewFaq[], now: Date, trx: Executor = db): Promise<number> {
      if (rows.length === 0) return 0
      await trx
        .insertInto('faq_candidates')
        .values(
          rows.map((r) => ({
            tenant_id: tenantId,
            question: r.question,
            answer: r.answer,
            confidence: r.confidence,
            source: r.source,
            approved: r.approved,
            question_key: r.questionKey,
            document_id: r.documentId,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
      await changes.announce(trx, FAQS_TOPIC, tenantId)
      return rows.length
    },

    /**
     * A document's text changed (or it is gone): its unreviewed candidates go, so the new version's
     * replace them. Approved ones and tombstones stay.
     */
    async dropUnreviewedFromDocument(tenantId: string, documentId: string | null, trx: Executor = db): Promise<number> {
      let q = trx
        .deleteFrom('faq_candidates')
        .where('tenant_id', '=', tenantId)
        .where('state', '=', 'active')
        .where('approved', '=', false)
        .where('source', 'in', ['docs', 'swagger'])
      q = documentId === null ? q.where('document_id', 'is', null) : q.where('document_id', '=', documentId)
      const r = await q.executeTakeFirst()
      if (Number(r.numDeletedRows) > 0) await changes.announce(trx, FAQS_TOPIC, tenantId)
      return Number(r.numDeletedRows)
    },

    /** Approved FAQs for answering (questions and answers only). */
    approvedFaqs(tenantId: string, limit: number, trx: Executor = db) {
      return trx
        .selectFrom('faq_candidates')
        .select(['id', 'question', 'answer'])
        .where('tenant_id', '=', tenantId)
        .where('approved', '=', true)
        .where('state', '=', 'active')
        .orderBy('updated_at', 'desc')
        .limit(limit)
        .execute()
    },
  }
}

export type KnowledgeRepo = ReturnType<typeof createKnowledgeRepo>
export type FaqRow = NonNullable<Awaited<ReturnType<KnowledgeRepo['findFaq']>>>
export type ProfileRow = NonNullable<Awaited<ReturnType<KnowledgeRepo['findProfile']>>>
