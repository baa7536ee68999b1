/**
 * Ordering the requests of a replay by time, ties in file order: {@link sortByTime}, a stable
 * sort of request indexes: a counting sort by second for short spans, a radix sort by second
 * for long ones, a comparison sort otherwise.
 *
 * @module
 */

/**
 * The order of the requests by time, ties in index (file) order: a stable sort of the indexes
 * `0 … count - 1` by `times[i]`.
 *
 * When every time is a whole number of seconds after the earliest and the span in seconds is at
 * most `maxBuckets`, a counting sort by second (O(count + span), stable by construction);
 * otherwise a comparison sort with the index as tie-breaker.
 *
 * @param times - times in **milliseconds**; only the first `count` are read.
 * @param maxBuckets - the largest span, in seconds, for the counting sort. Default
 *   `max(2^16, 2 * count)`, so that its memory stays within 8 bytes per request.
 */
export function sortByTime(
  times: Float64Array,
  count: number,
  maxBuckets = Math.max(1 << 16, 2 * count),
): Uint32Array {
  const order = new Uint32Array(count);
  if (count === 0) return order;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < count; i++) {
    const t = times[i] as number;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  const span = (max - min) / 1000;
  let wholeSeconds = span + 1 <= maxBuckets;
  for (let i = 0; wholeSeconds && i < count; i++) {
    const bucket = ((times[i] as number) - min) / 1000;
    if (bucket !== Math.floor(bucket)) wholeSeconds = false;
  }
  if (wholeSeconds) {
    const starts = new Uint32Array(span + 2);
    for (let i = 0; i < count; i++) {
      const bucket = ((times[i] as number) - min) / 1000;
      starts[bucket + 1]!++;
    }
    for (let b = 1; b < starts.length; b++) starts[b]! += starts[b - 1] as number;
    for (let i = 0; i < count; i++) {
      const bucket = ((times[i] as number) - min) / 1000;
      order[starts[bucket]!++] = i;
    }
    return order;
  }
  if (wholeSeconds && count >= RADIX_MIN_COUNT && span < 2 ** 32) {
    return radixSortBySecond(times, count, min, order);
  }
  for (let i = 0; i < count; i++) order[i] = i;
  order.sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
  return order;
}

/** Below this many requests the comparison sort is as fast as the radix sort. */
const RADIX_MIN_COUNT = 4_096;

/**
 * A stable LSD radix sort of the indexes by whole second after `min`, in two 16-bit passes:
 * O(count) for spans of up to 2^32 seconds, with two index arrays and 2^16 counters.
 */
function radixSortBySecond(times: Float64Array, count: number, min: number, order: Uint32Array): Uint32Array {
  const keys = new Uint32Array(count);
  for (let i = 0; i < count; i++) keys[i] = ((times[i] as number) - min) / 1000;
  let from: Uint32Array = new Uint32Array(count);
  for (let i = 0; i < count; i++) from[i] = i;
  let to: Uint32Array = order;
  const counts = new Uint32Array(1 << 16);
  for (const shift of [0, 16]) {
    counts.fill(0);
    for (let i = 0; i < count; i++) counts[((keys[from[i] as number] as number) >>> shift) & 0xffff]!++;
    let sum = 0;
    for (let b = 0; b < counts.length; b++) {
      const c = counts[b] as number;
      counts[b] = sum;
      sum += c;
    }
    for (let i = 0; i < count; i++) {
      const index = from[i] as number;
      to[counts[((keys[index] as number) >>> shift) & 0xffff]!++] = index;
    }
    [from, to] = [to, from];
  }
  return from;
}
