/**
 * A read-only diff of one file: @codemirror/merge, unified (default) or side by side, with the
 * file type's highlighting from JupyterLab's editor languages and the repair marks.
 */
import { Compartment, EditorState, Extension, RangeSetBuilder, Text } from '@codemirror/state';
import { Decoration, EditorView, ViewPlugin, WidgetType } from '@codemirror/view';
import { MergeView, getChunks, unifiedMergeView } from '@codemirror/merge';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { jupyterTheme } from '@jupyterlab/codemirror';
import { Widget } from '@lumino/widgets';
import type { IDiffModel } from '../model/diff';
import type { IRange } from '../model/marks';
import { DIFF_CONFIG, docOf, removesBreakLine } from '../model/shown';
import { collapseUnchanged, hideBreakLine, unfold } from './collapse';

export type DiffMode = 'unified' | 'split';

/** Unchanged stretches longer than this collapse, keeping this many lines of context. */
const COLLAPSE = { margin: 3, minSize: 6 };

/**
 * Below this width (px) a side-by-side view would hide the changed code behind horizontal
 * scrollbars (two editors of ~half a narrow cell each): the view shows unified instead, and
 * goes back to side by side when it is wide again.
 */
export const SPLIT_MIN_WIDTH = 640;

class DeletionMark extends WidgetType {
  constructor(readonly note: string) {
    super();
  }
  eq(other: DeletionMark): boolean {
    return other.note === this.note;
  }
  toDOM(): HTMLElement {
    const span = document.createElement('span');
    span.className = 'kli-RepairMark kli-RepairMark-point';
    span.title = this.note || 'repaired here';
    span.setAttribute('aria-label', span.title);
    return span;
  }
}

/** Decorations for the repaired characters of the new text. */
export function marksExtension(marks: IRange[]): Extension {
  if (!marks.length) {
    return [];
  }
  const builder = new RangeSetBuilder<Decoration>();
  for (const m of marks) {
    const attributes = { title: m.note || 'repaired', 'data-kli-note': m.note };
    if (m.to > m.from) {
      builder.add(m.from, m.to, Decoration.mark({ class: 'kli-RepairMark', attributes }));
    } else {
      builder.add(m.from, m.from, Decoration.widget({ widget: new DeletionMark(m.note), side: 1 }));
    }
  }
  return EditorView.decorations.of(builder.finish());
}

/** The language support for a file, or null (plain text). */
export async function languageSupport(
  registry: IEditorLanguageRegistry | null,
  path: string,
  name: string
): Promise<Extension | null> {
  if (!registry) {
    return null;
  }
  try {
    const base = path.split('/').pop() ?? path;
    const spec =
      registry.findByFileName(base) ?? (name && name !== 'text' ? registry.findBest(name) : null);
    if (!spec) {
      return null;
    }
    const lang = await registry.getLanguage(spec);
    return lang?.support ?? null;
  } catch (err) {
    console.warn('kli: no highlighting for', path, err);
    return null;
  }
}

/**
 * The unified view draws removed lines itself: when the last change removed the original's final
 * line break (or the original was empty), its block ends with the original's empty line after
 * that break, which is not a line of the file (model/shown.ts): hide it, and the block when that
 * was its only line.
 */
function hideRemovedBreakLine(original: Text): Extension {
  const mark = (view: EditorView): void => {
    const chunks = getChunks(view.state)?.chunks ?? [];
    if (!removesBreakLine(original, chunks)) {
      return;
    }
    const last = chunks[chunks.length - 1];
    for (const block of view.contentDOM.querySelectorAll<HTMLElement>('.cm-deletedChunk')) {
      if (view.posAtDOM(block) !== last.fromB) {
        continue;
      }
      const lines = block.querySelectorAll('.cm-deletedLine');
      lines[lines.length - 1]?.classList.add('kli-BreakLine');
      block.classList.toggle('kli-BreakLine', lines.length <= 1);
    }
  };
  return ViewPlugin.define(view => {
    // After the DOM is drawn (the blocks are drawn as they scroll into view).
    const key = {};
    const later = (): void =>
      view.requestMeasure({ key, read: () => null, write: () => mark(view) });
    later();
    return { update: later };
  });
}

function baseExtensions(language: Compartment, support: Extension | null): Extension[] {
  return [
    // The texts exactly: lines end at "\n" only, so a CRLF file's "\r" is part of its lines.
    EditorState.lineSeparator.of('\n'),
    hideBreakLine,
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    jupyterTheme,
    language.of(support ?? [])
  ];
}

export class DiffView extends Widget {
  constructor(
    readonly model: IDiffModel,
    private readonly _languages: IEditorLanguageRegistry | null,
    mode: DiffMode = 'unified'
  ) {
    super();
    this.addClass('kli-DiffView');
    this._mode = mode;
    this._render();
    if (typeof ResizeObserver !== 'undefined') {
      this._observer = new ResizeObserver(() => this._onResize());
      this._observer.observe(this.node);
    }
    void languageSupport(this._languages, model.path, model.language).then(support => {
      if (support && !this.isDisposed) {
        this._support = support;
        if (this.shownMode === 'unified') {
          // The unified view draws its deleted lines once, with the language it has when it
          // is built; reconfiguring later would leave them unhighlighted. Build it again.
          this._render();
        } else {
          this._applyLanguage();
        }
      }
    });
  }

  /** The mode asked for (the toggle's); `shownMode` is what the view draws at its width. */
  get mode(): DiffMode {
    return this._mode;
  }

  set mode(mode: DiffMode) {
    if (mode !== this._mode) {
      this._mode = mode;
      this._render();
    }
  }

  get shownMode(): DiffMode {
    return this._mode === 'split' && this._narrow ? 'unified' : this._mode;
  }

  /** Too narrow for side by side (see SPLIT_MIN_WIDTH). */
  get narrow(): boolean {
    return this._narrow;
  }

  /** Called when `narrow` changes (the file view greys its toggle). */
  onNarrowChanged: ((narrow: boolean) => void) | null = null;

  private _onResize(): void {
    const width = this.node.clientWidth;
    if (!width) {
      return; // hidden (a collapsed output, a closed panel): keep what it was
    }
    const narrow = width < SPLIT_MIN_WIDTH;
    if (narrow !== this._narrow) {
      const before = this.shownMode;
      this._narrow = narrow;
      this.node.dataset.narrow = String(narrow);
      if (this.shownMode !== before) {
        this._render();
      }
      this.onNarrowChanged?.(narrow);
    }
  }

  dispose(): void {
    this._observer?.disconnect();
    this._observer = null;
    this._destroy();
    super.dispose();
  }

  private _render(): void {
    this._destroy();
    const shown = this.shownMode;
    this.node.dataset.mode = shown;
    const m = this.model;
    const fold = collapseUnchanged({ ...COLLAPSE, onUnfold: index => this._unfold(index) });
    if (shown === 'unified') {
      const original = docOf(m.original);
      this._unified = new EditorView({
        parent: this.node,
        state: EditorState.create({
          doc: docOf(m.modified),
          extensions: [
            ...baseExtensions(this._language, this._support),
            unifiedMergeView({
              original,
              mergeControls: false,
              highlightChanges: true,
              gutter: true,
              syntaxHighlightDeletions: true,
              diffConfig: DIFF_CONFIG
            }),
            fold,
            hideRemovedBreakLine(original),
            marksExtension(m.marks)
          ]
        })
      });
    } else {
      const langA = new Compartment();
      this._split = new MergeView({
        parent: this.node,
        a: { doc: docOf(m.original), extensions: [...baseExtensions(langA, this._support), fold] },
        b: {
          doc: docOf(m.modified),
          extensions: [
            ...baseExtensions(this._language, this._support),
            fold,
            marksExtension(m.marks)
          ]
        },
        highlightChanges: true,
        gutter: true,
        diffConfig: DIFF_CONFIG
      });
      this._splitLangA = langA;
    }
    this._applyLanguage();
  }

  /** Unfold one unchanged stretch, on both sides of a split view. */
  private _unfold(index: number): void {
    const effects = unfold.of(index);
    this._unified?.dispatch({ effects });
    this._split?.a.dispatch({ effects });
    this._split?.b.dispatch({ effects });
  }

  private _applyLanguage(): void {
    const support = this._support;
    if (!support) {
      return;
    }
    if (this._unified) {
      this._unified.dispatch({ effects: this._language.reconfigure(support) });
    }
    if (this._split && this._splitLangA) {
      this._split.a.dispatch({
        effects: this._splitLangA.reconfigure(support)
      });
      this._split.b.dispatch({ effects: this._language.reconfigure(support) });
    }
  }

  private _destroy(): void {
    this._unified?.destroy();
    this._split?.destroy();
    this._unified = null;
    this._split = null;
    this._splitLangA = null;
  }

  private _mode: DiffMode;
  private _narrow = false;
  private _observer: ResizeObserver | null = null;
  private _language = new Compartment();
  private _splitLangA: Compartment | null = null;
  private _support: Extension | null = null;
  private _unified: EditorView | null = null;
  private _split: MergeView | null = null;
}
