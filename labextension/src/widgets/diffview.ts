/**
 * A read-only diff of one file: @codemirror/merge, unified (default) or side by side, with the
 * file type's highlighting from JupyterLab's editor languages and the repair marks.
 */
import { Compartment, EditorState, Extension, RangeSetBuilder } from '@codemirror/state';
import { Decoration, EditorView, WidgetType, lineNumbers } from '@codemirror/view';
import { DiffConfig, MergeView, unifiedMergeView } from '@codemirror/merge';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { jupyterTheme } from '@jupyterlab/codemirror';
import { Widget } from '@lumino/widgets';
import type { IDiffModel } from '../model/diff';
import { lineFirstDiff } from '../model/chardiff';
import type { IRange } from '../model/marks';

export type DiffMode = 'unified' | 'split';

/** Unchanged stretches longer than this collapse, keeping this many lines of context. */
const COLLAPSE = { margin: 3, minSize: 6 };

const DIFF_CONFIG: DiffConfig = { override: lineFirstDiff };

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

function baseExtensions(language: Compartment, support: Extension | null): Extension[] {
  return [
    lineNumbers(),
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
    this.node.dataset.emptyBefore = String(m.original === '');
    if (shown === 'unified') {
      this._unified = new EditorView({
        parent: this.node,
        state: EditorState.create({
          doc: m.modified,
          extensions: [
            ...baseExtensions(this._language, this._support),
            unifiedMergeView({
              original: m.original,
              mergeControls: false,
              highlightChanges: true,
              gutter: true,
              syntaxHighlightDeletions: true,
              collapseUnchanged: COLLAPSE,
              diffConfig: DIFF_CONFIG
            }),
            marksExtension(m.marks)
          ]
        })
      });
    } else {
      const langA = new Compartment();
      this._split = new MergeView({
        parent: this.node,
        a: { doc: m.original, extensions: baseExtensions(langA, this._support) },
        b: {
          doc: m.modified,
          extensions: [...baseExtensions(this._language, this._support), marksExtension(m.marks)]
        },
        highlightChanges: true,
        gutter: true,
        collapseUnchanged: COLLAPSE,
        diffConfig: DIFF_CONFIG
      });
      this._splitLangA = langA;
    }
    this._applyLanguage();
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
