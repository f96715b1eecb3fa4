/**
 * The diff the merge views use: changed lines first (./linediff), then characters inside each
 * changed stretch with @codemirror/merge's own diff.
 */
import { Change, DiffConfig, diff } from '@codemirror/merge';
import { lineHunks, lineStarts, splitLines } from './linediff';

/** Hunks larger than this (characters, both sides) are shown as whole changed lines. */
const REFINE_LIMIT = 20000;

/** Bounds for the character diff inside one hunk. */
const HUNK_DIFF: DiffConfig = { scanLimit: 1000, timeout: 50 };

/**
 * The changes from `a` to `b`: changed lines first (linediff), then the characters inside each
 * changed stretch, so a large file with few changes diffs in milliseconds.
 */
export function lineFirstDiff(a: string, b: string): readonly Change[] {
  const linesA = splitLines(a);
  const linesB = splitLines(b);
  const startA = lineStarts(linesA);
  const startB = lineStarts(linesB);
  const out: Change[] = [];
  for (const h of lineHunks(linesA, linesB)) {
    const fromA = startA[h.aFrom];
    const toA = startA[h.aTo];
    const fromB = startB[h.bFrom];
    const toB = startB[h.bTo];
    if (toA - fromA + (toB - fromB) > REFINE_LIMIT) {
      out.push(new Change(fromA, toA, fromB, toB));
      continue;
    }
    for (const c of diff(a.slice(fromA, toA), b.slice(fromB, toB), HUNK_DIFF)) {
      out.push(new Change(c.fromA + fromA, c.toA + fromA, c.fromB + fromB, c.toB + fromB));
    }
  }
  return out;
}
