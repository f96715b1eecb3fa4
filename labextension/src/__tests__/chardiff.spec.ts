import { describe, expect, it } from 'vitest';
import { diff } from '@codemirror/merge';
import { lineFirstDiff } from '../model/chardiff';

/** Apply changes (in order) to `a`, taking inserted text from `b`. */
function apply(
  a: string,
  b: string,
  changes: readonly { fromA: number; toA: number; fromB: number; toB: number }[]
): string {
  let out = '';
  let pos = 0;
  for (const c of changes) {
    out += a.slice(pos, c.fromA) + b.slice(c.fromB, c.toB);
    pos = c.toA;
  }
  return out + a.slice(pos);
}

describe('lineFirstDiff', () => {
  it('finds the changed characters inside changed lines', () => {
    const a = 'x = 1\ny = 2\nz = 3\n';
    const b = 'x = 1\ny = 20\nz = 3\n';
    const changes = lineFirstDiff(a, b);
    expect(apply(a, b, changes)).toBe(b);
    expect(changes.map(c => b.slice(c.fromB, c.toB)).join('')).toBe('0');
  });

  it('agrees with the character diff on what changes, for a large file with few changes', () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `value_${i} = compute(${i})\n`);
    const a = lines.join('');
    const b = lines.map((l, i) => (i % 100 === 50 ? l.replace('compute', 'measure') : l)).join('');
    const ours = lineFirstDiff(a, b);
    expect(apply(a, b, ours)).toBe(b);
    const inserted = (cs: readonly { fromB: number; toB: number }[]): number =>
      cs.reduce((n, c) => n + c.toB - c.fromB, 0);
    expect(inserted(ours)).toBe(inserted(diff(a, b)));
  });

  it('reports a whole stretch beyond the refine limit as one change', () => {
    const a = Array.from({ length: 2000 }, (_, i) => `a${i}\n`).join('');
    const b = Array.from({ length: 2000 }, (_, i) => `b${i}\n`).join('');
    const changes = lineFirstDiff(a, b);
    expect(changes.length).toBe(1);
    expect(apply(a, b, changes)).toBe(b);
  });

  it('handles a new file and an emptied one', () => {
    expect(apply('', 'new\n', lineFirstDiff('', 'new\n'))).toBe('new\n');
    expect(apply('old\n', '', lineFirstDiff('old\n', ''))).toBe('');
  });
});
