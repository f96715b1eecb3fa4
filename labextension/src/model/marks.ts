/**
 * Repair marks: the kernel counts characters as Python does (code points); the editor counts
 * UTF-16 code units. These functions map, clip and order the ranges before decorating.
 */
import type { IMark } from '../protocol';

/** A mark in UTF-16 offsets of the text it decorates; `from === to` marks a deletion point. */
export interface IRange {
  from: number;
  to: number;
  note: string;
}

/**
 * UTF-16 offset of each code point offset in `offsets` within `text`.
 *
 * Offsets beyond the text map to its end; negative ones to 0. One pass over the text.
 */
export function codePointsToUtf16(text: string, offsets: number[]): number[] {
  const wanted = [...new Set(offsets.map(o => Math.max(0, Math.floor(o))))].sort((a, b) => a - b);
  const found = new Map<number, number>();
  let cp = 0;
  let unit = 0;
  let w = 0;
  while (w < wanted.length && unit < text.length) {
    while (w < wanted.length && wanted[w] === cp) {
      found.set(wanted[w], unit);
      w++;
    }
    const code = text.charCodeAt(unit);
    unit += code >= 0xd800 && code <= 0xdbff && unit + 1 < text.length ? 2 : 1;
    cp++;
  }
  return offsets.map(o => found.get(Math.max(0, Math.floor(o))) ?? text.length);
}

/**
 * The marks as sorted, clipped UTF-16 ranges of `text`.
 *
 * A reversed range is swapped; a mark that is not a pair of numbers is dropped.
 */
export function mapMarks(text: string, marks: IMark[] | undefined | null): IRange[] {
  const valid = (marks ?? []).filter(
    m =>
      m &&
      typeof m.from === 'number' &&
      typeof m.to === 'number' &&
      Number.isFinite(m.from) &&
      Number.isFinite(m.to)
  );
  const offsets = codePointsToUtf16(
    text,
    valid.flatMap(m => [m.from, m.to])
  );
  const ranges = valid.map((m, i) => {
    const a = offsets[2 * i];
    const b = offsets[2 * i + 1];
    return { from: Math.min(a, b), to: Math.max(a, b), note: m.note ?? '' };
  });
  return ranges.sort((x, y) => x.from - y.from || x.to - y.to);
}

/** 1-based line numbers (in `text`) that carry at least one mark. */
export function markedLines(text: string, ranges: IRange[]): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      starts.push(i + 1);
    }
  }
  const lineOf = (pos: number): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= pos) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo + 1;
  };
  const lines = new Set<number>();
  for (const r of ranges) {
    const last = lineOf(Math.max(r.from, r.to - 1));
    for (let l = lineOf(r.from); l <= last; l++) {
      lines.add(l);
    }
  }
  return [...lines].sort((a, b) => a - b);
}
