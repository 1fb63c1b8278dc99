/**
 * Repeats a delete of at most `batch` rows until one deletes fewer, so a long backlog goes in short statements
 * (each its own transaction) instead of one long lock. Returns how many rows went in all.
 */
export async function deleteInBatches(batch: number, deleteSome: (limit: number) => Promise<number>): Promise<number> {
  let total = 0
  for (;;) {
    const n = await deleteSome(batch)
    total += n
    if (n < batch) return total
  }
}
