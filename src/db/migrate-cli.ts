import 'dotenv/config'
import { loadConfig } from '../config.js'
import { defaultPgliteDir, openDatabase } from './client.js'

/** `npm run migrate`: applies pending migrations (the server also does this at start). */
const config = loadConfig()
const handle = await openDatabase({ url: config.DATABASE_URL, pgliteDir: defaultPgliteDir(config.dataDir) })
console.log(`migrations applied (${handle.kind}); pgvector: ${handle.features.vector ? 'yes' : 'no'}`)
await handle.close()
