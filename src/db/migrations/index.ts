import type { Migration } from 'kysely'
import * as m0001 from './0001_foundation.js'
import * as m0002 from './0002_extensions.js'
import * as m0100 from './0100_ingestion.js'
import * as m0150 from './0150_sources.js'
import * as m0200 from './0200_chat.js'
import * as m0201 from './0201_retrieval_stats.js'
import * as m0400 from './0400_escalations.js'
import * as m0500 from './0500_knowledge.js'
import * as m0510 from './0510_embedding_failures.js'
import * as m0600 from './0600_team.js'
import * as m0700 from './0700_webhooks.js'
import * as m0800 from './0800_analytics.js'
import * as m1000 from './1000_live.js'
import * as m1100 from './1100_actions.js'
import * as m1300 from './1300_evals.js'
import * as m1400e from './1400_evals_auto_run.js'
import * as m1500l from './1500_live_availability.js'
import * as m1610k from './1610_key_fingerprint.js'
import * as m1620 from './1620_email_channel.js'
import * as m1630a from './1630_assist.js'
import * as m1640 from './1640_inbox.js'
import * as m1650 from './1650_languages.js'
import * as m1665 from './1665_email_search.js'
import * as m1670 from './1670_email_outgoing.js'
import * as m1850 from './1850_reply_mailed_at.js'
import * as m1851 from './1851_email_never_gone.js'
import * as m1750 from './1750_connectors.js'
import * as m1800 from './1800_attachments.js'
import * as m1860 from './1860_attachment_chunks.js'

/**
 * The one migration history, for PGlite and PostgreSQL alike. Names sort in the order they run; never
 * edit one that has shipped, add a new one.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_extensions': m0002,
  '0100_ingestion': m0100,
  '0150_sources': m0150,
  '0200_chat': m0200,
  '0201_retrieval_stats': m0201,
  '0400_escalations': m0400,
  '0500_knowledge': m0500,
  '0510_embedding_failures': m0510,
  '0600_team': m0600,
  '0700_webhooks': m0700,
  '0800_analytics': m0800,
  '1000_live': m1000,
  '1100_actions': m1100,
  '1300_evals': m1300,
  '1400_evals_auto_run': m1400e,
  '1500_live_availability': m1500l,
  '1610_key_fingerprint': m1610k,
  '1620_email_channel': m1620,
  '1630_assist': m1630a,
  '1640_inbox': m1640,
  '1650_languages': m1650,
  '1665_email_search': m1665,
  '1670_email_outgoing': m1670,
  '1850_reply_mailed_at': m1850,
  '1851_email_never_gone': m1851,
  '1750_connectors': m1750,
  '1800_attachments': m1800,
  '1860_attachment_chunks': m1860,
}
