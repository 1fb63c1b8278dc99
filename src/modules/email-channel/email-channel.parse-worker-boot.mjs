// Worker threads do not inherit the TypeScript loader on Node 20: register tsx here, then load the worker.
import { register } from 'tsx/esm/api'

register()
await import('./email-channel.parse-worker.ts')
