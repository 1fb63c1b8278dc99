import { h, icon } from './dom.js'
import { fill, type UiLabels } from './labels.js'

/** A file as the service stored it (POST /widget/attachments). */
export interface Attached {
  id: string
  name: string
  content_type: string
  size: number
  kind: 'image' | 'document'
}

interface Pending {
  file: File
  el: HTMLElement
  /** the upload, started as soon as the file is picked: its stored form, or null when it failed */
  done: Promise<Attached | null>
  thumb: string | null
}

const MAX_FILES = 5
export const CLIP = 'M16.5 6.5v10a4.5 4.5 0 0 1-9 0V5a3 3 0 0 1 6 0v10.5a1.5 1.5 0 0 1-3 0V6.5H9v9a3 3 0 0 0 6 0V5a4.5 4.5 0 0 0-9 0v11.5a6 6 0 0 0 12 0v-10z'

/**
 * The composer's files (issue 54): picked with the button, pasted or dropped; each is uploaded at once to the
 * conversation (a thumbnail or its name shown, removable before sending) and sent with the next message by id.
 * Errors are said in the visitor's language; the button and each remove button are keyboard and screen-reader usable.
 */
export function createAttachments(deps: {
  labels: () => UiLabels
  /** uploads to this conversation (created first when there is none) */
  upload: (file: File) => Promise<Attached>
  /** a line for the visitor, said to screen readers too */
  say: (text: string) => void
  changed: () => void
  maxMb: number
}) {
  const pending: Pending[] = []
  const picker = h('input', { type: 'file', hidden: '', multiple: '', accept: 'image/png,image/jpeg,image/webp,image/gif,application/pdf,.docx,text/plain' })
  const button = h('button', { type: 'button', class: 'attach' })
  button.append(icon(CLIP))
  const tray = h('ul', { class: 'tray' })
  tray.hidden = true

  function labels(): void {
    button.setAttribute('aria-label', deps.labels().attach)
    button.title = deps.labels().attach
  }

  function errorText(err: unknown, name: string): string {
    const ui = deps.labels()
    const status = (err as { status?: number }).status
    if (status === 415) return fill(ui.file_type, { name })
    if (status === 413) return fill(ui.file_too_large, { name, max: deps.maxMb })
    return fill(ui.file_failed, { name })
  }

  function remove(p: Pending): void {
    const i = pending.indexOf(p)
    if (i >= 0) pending.splice(i, 1)
    if (p.thumb) URL.revokeObjectURL(p.thumb)
    p.el.remove()
    tray.hidden = pending.length === 0
    deps.changed()
  }

  function add(files: Iterable<File>): void {
    for (const file of files) {
      if (pending.length >= MAX_FILES) {
        deps.say(fill(deps.labels().files_max, { n: MAX_FILES }))
        break
      }
      const thumb = file.type.startsWith('image/') ? URL.createObjectURL(file) : null
      const rm = h('button', { type: 'button', class: 'rm', 'aria-label': fill(deps.labels().remove_file, { name: file.name }) }, '×')
      const el = h(
        'li',
        { class: 'file busy' },
        thumb ? h('img', { src: thumb, alt: '' }) : h('span', { class: 'doc', 'aria-hidden': 'true' }, '📄'),
        h('span', { class: 'name' }, file.name),
        rm,
      )
      const p: Pending = { file, el, thumb, done: Promise.resolve(null) }
      p.done = deps.upload(file).then(
        (a) => {
          el.classList.remove('busy')
          return a
        },
        (err) => {
          deps.say(errorText(err, file.name))
          remove(p)
          return null
        },
      )
      rm.addEventListener('click', () => {
        remove(p)
        button.focus()
      })
      pending.push(p)
      tray.append(el)
      tray.hidden = false
    }
    deps.changed()
  }

  button.addEventListener('click', () => picker.click())
  picker.addEventListener('change', () => {
    if (picker.files) add(Array.from(picker.files))
    picker.value = ''
  })

  return {
    button,
    picker,
    tray,
    labels,
    add,
    /** files waiting to be sent */
    count: () => pending.length,
    /** a paste or a drop: its files join the tray (true when there were some) */
    fromTransfer(data: DataTransfer | null): boolean {
      const files = data ? Array.from(data.files) : []
      if (files.length) add(files)
      return files.length > 0
    },
    /** the stored files to send, once every upload is done; the tray is emptied */
    async take(): Promise<Attached[]> {
      const all = await Promise.all(pending.map((p) => p.done))
      for (const p of [...pending]) remove(p)
      return all.filter((a): a is Attached => a !== null)
    },
  }
}

export type Attachments = ReturnType<typeof createAttachments>
