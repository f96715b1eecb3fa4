/**
 * One file's change: a header (path, +added -removed, status, unified / side-by-side toggle),
 * the diff, and for a repair preview the Accept / Reject controls.
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { PanelLayout, Widget } from '@lumino/widgets';
import { IDiffModel, countsText, fileToDiffModel } from '../model/diff';
import type { IDecision } from '../model/decision';
import type { IFileChange } from '../protocol';
import { DiffMode, DiffView, SPLIT_MIN_WIDTH } from './diffview';
import { placeLabel } from '../model/summary';
import { pathText } from './pathtext';
import { ConnectionLookup, RepairControls, button } from './repair';

export interface IFileViewOptions {
  languages: IEditorLanguageRegistry | null;
  /** Where Accept / Reject go; previews get no buttons without it. */
  lookup?: ConnectionLookup;
  mode?: DiffMode;
}

const STATUS_AFTER: Record<string, string> = {
  written: 'written',
  rejected: 'rejected',
  refused: 'refused: the file changed since the preview',
  gone: 'no longer pending'
};

export class FileChangeView extends Widget {
  constructor(file: IFileChange, options: IFileViewOptions) {
    super();
    this.addClass('kli-FileChange');
    const model = (this.model = fileToDiffModel(file));
    this.node.dataset.status = model.status;
    this.node.dataset.path = model.path;
    const layout = (this.layout = new PanelLayout());

    const header = new Widget({ node: document.createElement('div') });
    header.addClass('kli-FileChange-header');
    const path = document.createElement('span');
    path.className = 'kli-FileChange-path';
    // A cell is named by its notebook, position and first line; its id is a hover away.
    const place = placeLabel(file);
    path.textContent = place.text;
    path.title = place.title;
    pathText(path, !place.isCell);
    const counts = document.createElement('span');
    counts.className = 'kli-FileChange-counts';
    const added = document.createElement('span');
    added.className = 'kli-Added';
    added.textContent = `+${model.added}`;
    const removed = document.createElement('span');
    removed.className = 'kli-Removed';
    removed.textContent = `-${model.removed}`;
    counts.append(added, ' ', removed);
    counts.setAttribute('aria-label', countsText(model));
    this._status = document.createElement('span');
    this._status.className = 'kli-FileChange-status';
    this._setStatus(model.statusKind, model.statusText);
    header.node.append(path, counts, this._status);
    layout.addWidget(header);

    if (model.noDiff) {
      const note = new Widget({ node: document.createElement('p') });
      note.addClass('kli-FileChange-note');
      note.node.textContent = model.noDiffReason;
      layout.addWidget(note);
    } else {
      const diff = new DiffView(model, options.languages, options.mode ?? 'unified');
      this._toggle = button('Side by side', 'kli-FileChange-mode', () => {
        diff.mode = diff.mode === 'unified' ? 'split' : 'unified';
        this._syncToggle(diff);
      });
      // Asked for side by side where it does not fit: say so where the view would change.
      this._narrowNote = document.createElement('p');
      this._narrowNote.className = 'kli-FileChange-narrow';
      const note = new Widget({ node: this._narrowNote });
      diff.onNarrowChanged = () => this._syncToggle(diff);
      this._syncToggle(diff);
      header.node.append(this._toggle);
      layout.addWidget(note);
      layout.addWidget(diff);
    }

    if (model.candidate && options.lookup) {
      const preview = {
        candidate: model.candidate,
        path: model.path,
        after: typeof file.after === 'string' ? file.after : null
      };
      const controls = new RepairControls(preview, model.lead, options.lookup);
      controls.decisionChanged.connect(this._onDecision, this);
      this.repair = controls;
      layout.addWidget(controls);
    }
  }

  readonly model: IDiffModel;
  readonly repair: RepairControls | null = null;

  private _onDecision(_: RepairControls, decision: IDecision): void {
    const after = STATUS_AFTER[decision.state];
    if (after) {
      this.node.dataset.status = decision.state;
      this._setStatus(decision.state, after);
    }
  }

  private _setStatus(kind: string, text: string): void {
    this._status.dataset.kind = kind;
    this._status.textContent = text;
  }

  /**
   * The toggle names the other view than the one drawn; side by side asked for where it does
   * not fit is drawn unified, with a note that says why and when it changes.
   */
  private _syncToggle(diff: DiffView): void {
    const toggle = this._toggle;
    if (!toggle) {
      return;
    }
    const split = diff.shownMode === 'split';
    const waiting = diff.mode === 'split' && !split;
    toggle.textContent = split ? 'Unified' : 'Side by side';
    toggle.setAttribute('aria-pressed', String(diff.mode === 'split'));
    toggle.title = split ? 'Show one unified diff' : 'Show the old and new text side by side';
    if (waiting) {
      toggle.title = 'Back to the unified diff only';
    }
    if (this._narrowNote) {
      this._narrowNote.hidden = !waiting;
      this._narrowNote.textContent = waiting
        ? `Side by side needs ${SPLIT_MIN_WIDTH} px and this diff is narrower: shown ` +
          'unified until it is wider (widen the notebook or the panel, or close a sidebar).'
        : '';
    }
  }

  private _status: HTMLSpanElement;
  private _toggle: HTMLButtonElement | null = null;
  private _narrowNote: HTMLParagraphElement | null = null;
}
