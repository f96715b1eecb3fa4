/**
 * A cell's own view of what the tools did to it: below the input area of a cell of an open
 * notebook, the diff of an applied edit (dismissable), or of a pending proposal — a repair
 * preview or an agent's call held for review — with the same Accept / Reject the activity panel
 * has (one queue: both send the candidate's `accept` / `reject` on the kernel's `kli.ui` comm,
 * both learn the outcome from its `resolved`). A decided proposal folds to one line.
 *
 * The boxes are widgets in the cell's layout only: nothing is written to the cell's model, so
 * nothing of them is saved with the notebook.
 */
import { PageConfig } from '@jupyterlab/coreutils';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import { PanelLayout, Widget } from '@lumino/widgets';
import { UiConnection, connectionFor, isKliKernel } from '../connection';
import { ICellChange, cellChanges, headWords, keptDecided, kernelPath } from '../model/celldiff';
import { IDecision, decisionText, isFinal } from '../model/decision';
import { heldLead } from '../model/diff';
import { FileChangeView } from './fileview';
import { RepairControls, button } from './repair';

/** A cell widget as far as this module needs it (`Cell` of @jupyterlab/cells). */
interface ICellLike extends Widget {
  model: { id: string; type: string };
  inputArea: Widget | null;
}

/** One change of one cell: a head (who, what, Dismiss) and the diff with its controls. */
class CellChangeItem extends Widget {
  constructor(
    readonly change: ICellChange,
    languages: IEditorLanguageRegistry | null,
    language: string,
    readonly conn: UiConnection,
    key: string,
    private readonly _dismiss: (key: string) => void
  ) {
    super();
    const lookup = (): UiConnection => conn;
    this.addClass('kli-CellDiff-item');
    this.node.dataset.kind = change.kind;
    this.node.dataset.key = key;
    if (change.candidate) {
      this.node.dataset.candidate = change.candidate;
    }
    const layout = (this.layout = new PanelLayout());
    const head = new Widget();
    head.addClass('kli-CellDiff-head');
    this._words = document.createElement('span');
    this._words.className = 'kli-CellDiff-words';
    this._words.textContent = headWords(change);
    this._dismissButton = button('Dismiss', 'kli-CellDiff-dismiss', () => this._dismiss(key));
    this._dismissButton.title = 'Hide this on the cell (the activity panel keeps it)';
    head.node.append(this._words, this._dismissButton);
    layout.addWidget(head);
    if (change.kind === 'run') {
      // A held run has no diff: the words say which cells Accept runs.
      this._view = new Widget();
      this._view.addClass('kli-CellDiff-run');
      this._controls = new RepairControls(
        { candidate: change.candidate ?? '', path: change.file.path, after: null, runs: true },
        heldLead(change.runs ?? 'Accept runs it'),
        lookup
      );
      this._view.layout = new PanelLayout();
      (this._view.layout as PanelLayout).addWidget(this._controls);
    } else {
      const file =
        change.file.language && change.file.language !== 'text'
          ? change.file
          : { ...change.file, language };
      const view = new FileChangeView(file, { languages, lookup });
      this._view = view;
      this._controls = view.repair;
    }
    layout.addWidget(this._view);
    const controls = this._controls;
    if (controls) {
      controls.decisionChanged.connect((_, d) => this._onDecision(d));
      this._onDecision(controls.decision);
    }
  }

  /** Decided (written, rejected, refused, gone): the item stays, folded, until dismissed. */
  get decided(): boolean {
    const d = this._controls?.decision;
    return !!d && isFinal(d);
  }

  private _onDecision(d: IDecision): void {
    const final = isFinal(d);
    this.node.dataset.state = d.state;
    // Only a decided proposal may be dismissed; an applied edit always.
    this._dismissButton.hidden = this.change.kind !== 'applied' && !final;
    this._view.setHidden(final);
    this._words.textContent = final
      ? `${headWords(this.change, true)}: ${decisionText(d, this.change.kind === 'run')}`
      : headWords(this.change);
  }

  private _words: HTMLSpanElement;
  private _dismissButton: HTMLButtonElement;
  private _view: Widget;
  private _controls: RepairControls | null;
}

/** The box below one cell's input: its items in order. */
class CellDiffBox extends Widget {
  constructor() {
    super();
    this.addClass('kli-CellDiff');
    this.layout = new PanelLayout();
  }

  readonly items = new Map<string, CellChangeItem>();
}

/**
 * The `kli.ui` connections of every kli kernel an open notebook runs (an agent attached to one
 * kernel may change a notebook open with another): `changed` when any of them changes, or the
 * set does.
 */
export class KliConnections {
  constructor(private readonly _tracker: INotebookTracker) {
    const watch = (panel: NotebookPanel): void => {
      panel.sessionContext.kernelChanged.connect(this._refresh, this);
      void panel.sessionContext.ready.then(() => this._refresh());
      panel.disposed.connect(() => this._refresh());
    };
    _tracker.forEach(watch);
    _tracker.widgetAdded.connect((_, panel) => watch(panel));
    this._refresh();
  }

  get connections(): UiConnection[] {
    return [...this._conns];
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  private _refresh(): void {
    const now = new Set<UiConnection>();
    this._tracker.forEach(panel => {
      const kernel = panel.isDisposed ? null : (panel.sessionContext.session?.kernel ?? null);
      if (kernel && isKliKernel(kernel)) {
        now.add(connectionFor(kernel));
      }
    });
    for (const conn of this._conns) {
      if (!now.has(conn)) {
        conn.changed.disconnect(this._onChanged, this);
      }
    }
    for (const conn of now) {
      if (!this._conns.has(conn)) {
        conn.changed.connect(this._onChanged, this);
      }
    }
    this._conns = now;
    this._changed.emit();
  }

  private _onChanged(): void {
    this._changed.emit();
  }

  private _conns = new Set<UiConnection>();
  private _changed = new Signal<this, void>(this);
}

/** A change wanted on a cell, with the connection of the kernel that announced it. */
interface IWanted {
  change: ICellChange;
  conn: UiConnection;
  /** The item's key: the kernel's id and the change's own key (candidate ids restart per kernel). */
  key: string;
}

/**
 * The cell views of one notebook panel: the changes every open kli kernel announces for its
 * cells (through the `kli.ui` connection the activity panel uses), kept in step with its cells.
 */
export class NotebookCellDiffs {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _languages: IEditorLanguageRegistry | null,
    private readonly _connections: KliConnections
  ) {
    _connections.changed.connect(this._sync, this);
    _panel.context.pathChanged.connect(this._sync, this);
    _panel.content.modelContentChanged.connect(this._sync, this);
    _panel.disposed.connect(() => this.dispose());
    this._sync();
  }

  dispose(): void {
    this._connections.changed.disconnect(this._sync, this);
    for (const box of this._boxes.values()) {
      box.dispose();
    }
    this._boxes.clear();
  }

  private _dismiss = (key: string): void => {
    this._dismissed.add(key);
    this._sync();
  };

  /** The changes each kernel names for this notebook, by cell id. */
  private _wanted(): Map<string, IWanted[]> {
    const out = new Map<string, IWanted[]>();
    const own = this._panel.sessionContext.session?.kernel ?? null;
    const serverRoot = PageConfig.getOption('serverRoot');
    for (const conn of this._connections.connections) {
      const state = conn.state;
      // Without the kernel's root only its own notebook can be matched (by file name).
      if (!state.ready || (!state.root && conn.kernel !== own)) {
        continue;
      }
      const notebook = kernelPath(this._panel.context.path, state.root, serverRoot);
      if (!notebook) {
        continue;
      }
      const prefix = `${conn.kernel.id}|`;
      const dismissed = new Set(
        [...this._dismissed].filter(k => k.startsWith(prefix)).map(k => k.slice(prefix.length))
      );
      for (const [cellId, changes] of cellChanges(state, notebook, dismissed)) {
        const list = out.get(cellId) ?? [];
        list.push(...changes.map(change => ({ change, conn, key: prefix + change.key })));
        out.set(cellId, list);
      }
    }
    return out;
  }

  private _sync(): void {
    if (this._panel.isDisposed) {
      return;
    }
    const order = this._panel.content.widgets as unknown as ICellLike[];
    const cells = new Map<string, ICellLike>(order.map(cell => [cell.model.id, cell]));
    // A held insert's cell does not exist yet: it shows on the cell it would follow (or
    // precede, or the notebook's first / last cell).
    const shownOn = (cellId: string, w: IWanted): string | undefined => {
      const where = w.change.placement;
      if (cells.has(cellId) || !where) {
        return cellId;
      }
      if (where.anchor && cells.has(where.anchor)) {
        return where.anchor;
      }
      return (where.where === 'start' ? order[0] : order[order.length - 1])?.model.id;
    };
    const byCell = new Map<string, IWanted[]>();
    for (const [cellId, changes] of this._wanted()) {
      for (const w of changes) {
        const at = shownOn(cellId, w);
        if (at && cells.has(at)) {
          byCell.set(at, [...(byCell.get(at) ?? []), w]);
        }
      }
    }
    const language = this._language();
    for (const [cellId, changes] of byCell) {
      const cell = cells.get(cellId)!;
      const box = this._box(cellId, cell);
      for (const { change, conn, key } of changes) {
        if (!box.items.has(key)) {
          const lang = cell.model.type === 'markdown' ? 'markdown' : language;
          box.items.set(
            key,
            new CellChangeItem(change, this._languages, lang, conn, key, this._dismiss)
          );
        }
      }
      this._prune(box, new Set(changes.map(w => w.key)));
      this._order(
        box,
        changes.map(w => w.key)
      );
    }
    // Cells with nothing new: keep a decided proposal (folded) until it is dismissed.
    for (const [cellId, box] of this._boxes) {
      if (!byCell.has(cellId)) {
        this._prune(box, new Set<string>());
        this._order(box, []);
      }
      if (!box.items.size || !cells.has(cellId)) {
        box.dispose();
        this._boxes.delete(cellId);
      }
    }
  }

  /** Drop the items no longer wanted: a decided proposal (or one whose `resolved` is on its
   * way) stays, folded, only as the cell's last word (``keptDecided``) unless dismissed. */
  private _prune(box: CellDiffBox, keys: Set<string>): void {
    const decided = [...box.items]
      .filter(
        ([, item]) =>
          item.change.kind !== 'applied' &&
          (item.decided || (item.change.candidate ?? '') in item.conn.state.resolved)
      )
      .map(([key]) => key);
    const kept = keptDecided(keys, decided);
    for (const [key, item] of [...box.items]) {
      if (!this._dismissed.has(key) && (keys.has(key) || kept.has(key))) {
        continue;
      }
      item.dispose();
      box.items.delete(key);
    }
  }

  /** Wanted items in the model's order, then the kept decided ones. */
  private _order(box: CellDiffBox, keys: string[]): void {
    const layout = box.layout as PanelLayout;
    const order = [
      ...keys.map(k => box.items.get(k)).filter((w): w is CellChangeItem => !!w),
      ...[...box.items.entries()].filter(([k]) => !keys.includes(k)).map(([, w]) => w)
    ];
    order.forEach((item, i) => {
      if (layout.widgets[i] !== item) {
        layout.insertWidget(i, item);
      }
    });
  }

  /** The cell's box, placed right below its input area (created on first use). */
  private _box(cellId: string, cell: ICellLike): CellDiffBox {
    let box = this._boxes.get(cellId);
    if (box && box.parent !== cell) {
      box.dispose(); // the cell widget was made again (e.g. its type changed)
      box = undefined;
    }
    if (!box) {
      box = new CellDiffBox();
      box.node.dataset.cellId = cellId;
      const layout = cell.layout as PanelLayout;
      const input = cell.inputArea?.parent ?? null;
      const at = input ? layout.widgets.indexOf(input) : -1;
      layout.insertWidget(at < 0 ? layout.widgets.length : at + 1, box);
      this._boxes.set(cellId, box);
    }
    return box;
  }

  /** The notebook's language for highlighting its code cells' diffs. */
  private _language(): string {
    const model = this._panel.content.model;
    const info = model?.getMetadata('language_info') as { name?: unknown } | undefined;
    const spec = model?.getMetadata('kernelspec') as { language?: unknown } | undefined;
    const name = info?.name ?? spec?.language;
    return typeof name === 'string' && name ? name : 'python';
  }

  private _boxes = new Map<string, CellDiffBox>();
  private _dismissed = new Set<string>();
}
