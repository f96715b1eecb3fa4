import { describe, expect, it } from 'vitest';
import { ILineHunk, MAX_EDIT_DISTANCE, lineHunks, lineStarts, splitLines } from '../model/linediff';

/** Apply hunks (in order) to `a`, taking the new lines from `b`. */
function apply(a: string[], b: string[], hunks: ILineHunk[]): string[] {
  const out: string[] = [];
  let i = 0;
  for (const h of hunks) {
    out.push(...a.slice(i, h.aFrom), ...b.slice(h.bFrom, h.bTo));
    i = h.aTo;
  }
  return [...out, ...a.slice(i)];
}

/** Lines deleted plus lines inserted by a shortest edit script (LCS by dynamic programming). */
function editDistance(a: string[], b: string[]): number {
  const dp = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
    }
  }
  return a.length + b.length - 2 * dp[0][0];
}

function changed(hunks: ILineHunk[]): number {
  return hunks.reduce((n, h) => n + (h.aTo - h.aFrom) + (h.bTo - h.bFrom), 0);
}

/** A small deterministic pseudo-random generator (tests must not flake). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('splitLines', () => {
  it('keeps line breaks and a last line without one', () => {
    expect(splitLines('a\nb\nc')).toEqual(['a\n', 'b\n', 'c']);
    expect(splitLines('a\n')).toEqual(['a\n']);
    expect(splitLines('')).toEqual([]);
  });

  it('gives the character offset of each line', () => {
    expect(lineStarts(['ab\n', 'c\n', 'd'])).toEqual([0, 3, 5, 6]);
  });
});

describe('lineHunks', () => {
  it('finds one replaced line between equal ones', () => {
    const a = ['x\n', 'y\n', 'z\n'];
    const b = ['x\n', 'Y\n', 'z\n'];
    expect(lineHunks(a, b)).toEqual([{ aFrom: 1, aTo: 2, bFrom: 1, bTo: 2 }]);
  });

  it('reports pure insertions and deletions with empty sides', () => {
    expect(lineHunks(['a\n', 'c\n'], ['a\n', 'b\n', 'c\n'])).toEqual([
      { aFrom: 1, aTo: 1, bFrom: 1, bTo: 2 }
    ]);
    expect(lineHunks(['a\n', 'b\n', 'c\n'], ['a\n', 'c\n'])).toEqual([
      { aFrom: 1, aTo: 2, bFrom: 1, bTo: 1 }
    ]);
    expect(lineHunks([], ['new\n'])).toEqual([{ aFrom: 0, aTo: 0, bFrom: 0, bTo: 1 }]);
    expect(lineHunks(['a\n'], ['a\n'])).toEqual([]);
  });

  it('rebuilds B from A with a shortest edit script, on random inputs', () => {
    const next = rng(7);
    for (let round = 0; round < 300; round++) {
      const alphabet = 1 + Math.floor(next() * 5);
      const line = (): string => `l${Math.floor(next() * alphabet)}\n`;
      const a = Array.from({ length: Math.floor(next() * 12) }, line);
      const b = Array.from({ length: Math.floor(next() * 12) }, line);
      const hunks = lineHunks(a, b);
      expect(apply(a, b, hunks)).toEqual(b);
      expect(changed(hunks)).toBe(editDistance(a, b));
      for (let h = 1; h < hunks.length; h++) {
        expect(hunks[h].aFrom).toBeGreaterThan(hunks[h - 1].aTo - 1);
      }
    }
  });

  it('spreads 1% changes of a 20,000-line file over 200 one-line hunks', () => {
    const a = Array.from({ length: 20000 }, (_, i) => `v${i} = ${i}\n`);
    const b = a.map((l, i) => (i % 100 === 50 ? `# ${l}` : l));
    const hunks = lineHunks(a, b);
    expect(hunks.length).toBe(200);
    expect(hunks[0]).toEqual({ aFrom: 50, aTo: 51, bFrom: 50, bTo: 51 });
    expect(apply(a, b, hunks)).toEqual(b);
  });

  it('gives up on very different files with one hunk between the common ends', () => {
    const n = MAX_EDIT_DISTANCE + 10;
    const a = ['head\n', ...Array.from({ length: n }, (_, i) => `a${i}\n`), 'tail\n'];
    const b = ['head\n', ...Array.from({ length: n }, (_, i) => `b${i}\n`), 'tail\n'];
    expect(lineHunks(a, b)).toEqual([{ aFrom: 1, aTo: n + 1, bFrom: 1, bTo: n + 1 }]);
  });
});
