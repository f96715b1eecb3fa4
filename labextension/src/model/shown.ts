/**
 * The lines a diff view draws, and which of them it draws as changed. Pure: the view
 * (widgets/diffview.ts) and the tests use the same documents, diff and chunks.
 *
 * The documents are the texts exactly: split at "\n" only (a CRLF file keeps its "\r", so a
 * change of line ending is a changed line), the final line break kept. Keeping it is what lets
 * @codemirror/merge place an insertion after the last line, or a deletion of it, on those lines
 * alone: without it an append reads as the last line deleted and re-added. A text ending in a
 * line break ends with an empty line that is not a line of the file (the line after the break):
 * the view does not draw it (finalBreak), and nothing here counts it.
 */
import { Chunk, DiffConfig } from '@codemirror/merge';
import { Text } from '@codemirror/state';
import { lineFirstDiff } from './chardiff';

/** The diff both views compute (changed lines first, then characters inside them). */
export const DIFF_CONFIG: DiffConfig = { override: lineFirstDiff };

/** A text as the view's document: lines split at "\n" only. */
export function docOf(text: string): Text {
  return Text.of(text.split('\n'));
}

/**
 * The document's last line is the empty one after a final line break, or the one line of an
 * empty text: not a line of the file, and not drawn.
 */
export function endsWithBreakLine(doc: Text): boolean {
  return doc.line(doc.lines).length === 0;
}

/** How many lines the file has (the lines the view draws). */
export function fileLines(doc: Text): number {
  return doc.lines - (endsWithBreakLine(doc) ? 1 : 0);
}

/** The chunks the merge views compute for the two documents. */
export function chunksOf(a: Text, b: Text): readonly Chunk[] {
  return Chunk.build(a, b, DIFF_CONFIG);
}

/** Line numbers (1-based) of `doc` in [from, to) that are lines of the file. */
function linesIn(doc: Text, from: number, to: number): number[] {
  if (to <= from) {
    return [];
  }
  const first = doc.lineAt(Math.min(from, doc.length)).number;
  const last = doc.lineAt(Math.min(to - 1, doc.length)).number;
  const out: number[] = [];
  for (let n = first; n <= Math.min(last, fileLines(doc)); n++) {
    out.push(n);
  }
  return out;
}

/** One changed stretch as drawn: the old lines shown removed, the new ones shown added. */
export interface IShownChange {
  removed: number[];
  added: number[];
}

/** The changed stretches a diff of `original` → `modified` draws, in order. */
export function shownChanges(original: string, modified: string): IShownChange[] {
  const a = docOf(original);
  const b = docOf(modified);
  return chunksOf(a, b)
    .map(c => ({ removed: linesIn(a, c.fromA, c.toA), added: linesIn(b, c.fromB, c.toB) }))
    .filter(c => c.removed.length || c.added.length);
}

/**
 * The last chunk reaches past the original's last line into its final break line (the final
 * line break was removed, or the original was empty): the unified view's block of removed lines
 * then ends with that empty line, which the view hides.
 */
export function removesBreakLine(a: Text, chunks: readonly Chunk[]): boolean {
  const last = chunks[chunks.length - 1];
  return !!last && endsWithBreakLine(a) && last.toA > a.line(a.lines).from;
}
