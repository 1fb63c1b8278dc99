import { readFile } from 'node:fs/promises'
import { inject } from 'vitest'
import { setMemoryImage } from '../../src/db/client.js'

// Each test process's in-memory databases start from the run's one migrated image (see global-setup).
const file = inject('pgliteImage')
if (file) setMemoryImage(readFile(file).then((bytes) => new Blob([bytes])))
