/**
 * Seeded randomness for the safety suite: the same seed gives the same fault schedule and the same
 * client choices (keys, waits, sleeps), so a failing run can be replayed with `--seed`. The real
 * interleaving of requests still depends on the machine; the seed fixes what is *asked*, not when
 * the kernel answers.
 *
 * @module
 */

/** A deterministic source of numbers in [0, 1) (mulberry32). */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** One key of `weights`, chosen with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
}

/**
 * A seeded generator.
 *
 * @example
 * const rng = createRng(42); rng.int(1, 6); // the same value on every run with seed 42
 */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error("pick from an empty array");
      return items[Math.floor(next() * items.length)] as T;
    },
    weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
      const entries = Object.entries(weights) as [K, number][];
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      let roll = next() * total;
      for (const [key, weight] of entries) {
        roll -= weight;
        if (roll < 0) return key;
      }
      return (entries[entries.length - 1] as [K, number])[0];
    },
  };
}

/**
 * A seed for a named sub-stream (`derive(seed, "client", 3)`), so adding a client does not shift
 * the schedule's numbers. FNV-1a over the parts.
 */
export function derive(seed: number, ...parts: (string | number)[]): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (const char of parts.join("/")) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A fresh random seed (for runs started without `--seed`), from `crypto.getRandomValues`. */
export function randomSeed(): number {
  const [value = 1] = crypto.getRandomValues(new Uint32Array(1));
  return value % 1_000_000_000;
}
