/**
 * Sets `key` in a map used as a bounded cache: the key moves to the newest position, and when the map is
 * full the oldest entry (insertion order) makes room for it.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key)
  if (map.size >= max) map.delete(map.keys().next().value!)
  map.set(key, value)
}
