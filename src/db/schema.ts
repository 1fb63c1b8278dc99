import type { ActionsTables } from './schema/actions.js'
import type { AnalyticsTables } from './schema/analytics.js'
import type { AssistTables } from './schema/assist.js'
import type { AttachmentsTables } from './schema/attachments.js'
import type { ChatTables } from './schema/chat.js'
import type { EmailChannelTables } from './schema/email-channel.js'
import type { EvalsTables } from './schema/evals.js'
import type { EscalationsTables } from './schema/escalations.js'
import type { FoundationTables } from './schema/foundation.js'
import type { InboxTables } from './schema/inbox.js'
import type { IngestionTables } from './schema/ingestion.js'
import type { KnowledgeTables } from './schema/knowledge.js'
import type { LanguagesTables } from './schema/languages.js'
import type { SourcesTables } from './schema/sources.js'
import type { TeamTables } from './schema/team.js'
import type { WebhooksTables } from './schema/webhooks.js'

/**
 * The whole database as Kysely sees it. Each area keeps its tables in `schema/<area>.ts`; add the area
 * here when it gets tables.
 */
export interface Database
  extends FoundationTables,
    IngestionTables,
    SourcesTables,
    ChatTables,
    EscalationsTables,
    KnowledgeTables,
    AnalyticsTables,
    TeamTables,
    WebhooksTables,
    ActionsTables,
    EvalsTables,
    AssistTables,
    LanguagesTables,
    EmailChannelTables,
    InboxTables,
    AttachmentsTables {}
