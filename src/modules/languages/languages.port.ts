import type { LanguageSettings, LanguageSource } from './languages.fns.js'

/** What the chat turn asks the languages module (languages.service.ts): the settings, and storing a session's language once known. */
export interface LanguagesPort {
  settingsFor(tenantId: string): Promise<LanguageSettings>
  setSessionLanguage(tenantId: string, sessionId: string, language: string, source: LanguageSource): Promise<void>
}
