/**
 * The diff view's own parts of a document: unchanged stretches folded as "N unchanged lines",
 * and the empty line after a final line break (model/shown.ts) not drawn.
 *
 * @codemirror/merge's collapseUnchanged would count that empty line as an unchanged line, and
 * draws its fold between "⦚" glyphs that the fonts of a stock Debian Chromium lack (empty
 * boxes); this fold counts the file's lines and says it in words.
 */
import { Extension, RangeSetBuilder, StateEffect, StateField, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, WidgetType, lineNumbers } from '@codemirror/view';
import { getChunks } from '@codemirror/merge';
import { endsWithBreakLine, fileLines } from '../model/shown';

/** Unfold the unchanged stretch with this index (0 = before the first change). */
export const unfold = StateEffect.define<number>();

export interface ICollapse {
  /** Unchanged lines kept as context next to a change. */
  margin: number;
  /** Stretches shorter than this stay open. */
  minSize: number;
  /** A click on a fold: the view unfolds stretch `index` (in every editor of a split view). */
  onUnfold: (index: number) => void;
}

/** The text of a fold of `lines` unchanged lines. */
export function foldText(lines: number): string {
  return lines === 1 ? '1 unchanged line' : `${lines} unchanged lines`;
}

class FoldWidget extends WidgetType {
  constructor(
    readonly lines: number,
    readonly index: number,
    readonly onUnfold: (index: number) => void
  ) {
    super();
  }
  eq(other: FoldWidget): boolean {
    return other.lines === this.lines && other.index === this.index;
  }
  toDOM(): HTMLElement {
    const fold = document.createElement('div');
    fold.className = 'kli-Fold';
    fold.textContent = foldText(this.lines);
    fold.title = 'Show these lines';
    fold.setAttribute('role', 'button');
    fold.addEventListener('click', () => this.onUnfold(this.index));
    return fold;
  }
  ignoreEvent(e: Event): boolean {
    return e instanceof MouseEvent;
  }
  get estimatedHeight(): number {
    return 24;
  }
}

/**
 * Folds for the unchanged stretches of `doc` between the merge chunks (the same stretches on
 * both sides of a split view, in the same order, so an index names one stretch on both).
 */
function buildFolds(
  doc: Text,
  chunkStarts: { from: number; to: number }[],
  open: ReadonlySet<number>,
  config: ICollapse
): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  const last = fileLines(doc);
  let next = 1; // the first line after the previous change
  for (let i = 0; i <= chunkStarts.length; i++) {
    const chunk = chunkStarts[i];
    const from = i ? next + config.margin : 1;
    const to = chunk ? doc.lineAt(chunk.from).number - 1 - config.margin : last;
    const lines = to - from + 1;
    if (lines >= config.minSize && !open.has(i)) {
      builder.add(
        doc.line(from).from,
        doc.line(to).to,
        Decoration.replace({ widget: new FoldWidget(lines, i, config.onUnfold), block: true })
      );
    }
    if (!chunk) {
      break;
    }
    next = doc.lineAt(Math.min(doc.length, chunk.to)).number;
  }
  return builder.finish();
}

interface IFolds {
  open: Set<number>;
  chunks: unknown;
  deco: DecorationSet;
}

/** Fold the unchanged stretches of a merge view's editor (unified, or one side of a split). */
export function collapseUnchanged(config: ICollapse): Extension {
  const build = (state: EditorView['state'], open: Set<number>): IFolds => {
    const found = getChunks(state);
    if (!found) {
      return { open, chunks: null, deco: Decoration.none };
    }
    const isA = found.side === 'a';
    const starts = found.chunks.map(c => ({
      from: isA ? c.fromA : c.fromB,
      to: isA ? c.toA : c.toB
    }));
    return { open, chunks: found.chunks, deco: buildFolds(state.doc, starts, open, config) };
  };
  const field = StateField.define<IFolds>({
    create: state => build(state, new Set()),
    update(value, tr) {
      let open = value.open;
      for (const e of tr.effects) {
        if (e.is(unfold)) {
          open = new Set([...open, e.value]);
        }
      }
      // A split view's chunks arrive after its editors are made (an appended configuration).
      const chunks = getChunks(tr.state)?.chunks ?? null;
      return open !== value.open || chunks !== value.chunks ? build(tr.state, open) : value;
    },
    provide: f => EditorView.decorations.from(f, v => v.deco)
  });
  return field;
}

/**
 * The empty line after a final line break is not drawn: no line, no number. (Its height goes
 * to 0; the merge views still align the two sides.)
 */
export const hideBreakLine: Extension = [
  EditorView.decorations.compute(['doc'], state => {
    const doc = state.doc;
    if (!endsWithBreakLine(doc)) {
      return Decoration.none;
    }
    const line = doc.line(doc.lines);
    return Decoration.set([Decoration.line({ class: 'kli-BreakLine' }).range(line.from)]);
  }),
  lineNumbers({
    formatNumber: (n, state) =>
      n === state.doc.lines && endsWithBreakLine(state.doc) ? '' : String(n)
  })
];
