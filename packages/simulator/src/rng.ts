/**
 * Seeded pseudo-random numbers. Everything the simulator invents (names, rates, churn) comes from
 * one of these, so a seed reproduces a world exactly. `fork` gives an independent stream, so that
 * e.g. the fault injector drawing numbers does not change what the world does next.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    // Avoid the all-zero state and spread small seeds over the 32-bit space.
    this.state = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ 0xc2b2ae35) >>> 0 || 0x6d2b79f5;
  }

  /** Uniform float in [0, 1) (mulberry32). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Index drawn with the given relative weights. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i] as number;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** Number of events of a Poisson process with the given mean (Knuth for small, normal beyond). */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.gaussian()));
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }

  gaussian(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  hex(digits: number): string {
    let out = '';
    while (out.length < digits) out += Math.floor(this.next() * 0x10000).toString(16).padStart(4, '0');
    return out.slice(0, digits);
  }

  /** A random version-4 UUID. */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** An independent generator derived from this one and a label. */
  fork(label: string): Rng {
    let h = 2166136261;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619);
    return new Rng((h ^ Math.floor(this.next() * 4294967296)) >>> 0);
  }
}

/**
 * Flussonic's runtime ids start with the Unix time in seconds as 8 hex digits
 * (`61893ba6-...` is 2021-11-08). Ids made this way sort by creation time, which keeps the
 * sessions collection in its default order when new sessions are appended.
 */
export function timeOrderedUuid(rng: Rng, unixMs: number, counter: number): string {
  const seconds = Math.floor(unixMs / 1000).toString(16).padStart(8, '0').slice(-8);
  const seq = (counter & 0xffff).toString(16).padStart(4, '0');
  const tail = rng.hex(19);
  const variant = ((parseInt(tail[3] as string, 16) & 0x3) | 0x8).toString(16);
  return `${seconds}-${seq}-4${tail.slice(0, 3)}-${variant}${tail.slice(4, 7)}-${tail.slice(7, 19)}`;
}
