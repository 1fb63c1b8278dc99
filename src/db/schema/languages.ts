import type { Json, Timestamp } from './foundation.js'

/** A workspace's languages (1650_languages); no row: the defaults (English knowledge, any answer language, English fallback). */
export interface TenantLanguagesTable {
  tenant_id: string
  /** the language the knowledge is written in */
  knowledge: string
  /** the languages the bot answers in; empty: any */
  answer: Json<string[]>
  /** the language a session outside `answer` gets */
  fallback: string
  updated_at: Timestamp
}

export interface LanguagesTables {
  tenant_languages: TenantLanguagesTable
}
