/**
 * The open model (docs/notebook.md): without jupyter-collaboration, an agent's change of a
 * notebook open in this browser is applied to the tab's model, not to the file.
 *
 * - Every `kli.ui` connection of this browser is told which notebooks are open here
 *   (`notebooks`: their server paths), again whenever one opens, closes or is renamed, and when
 *   the connection (re)opens.
 * - `model_read`: the notebook as the tab has it (unsaved typing included), every cell with its
 *   id.
 * - `model_apply`: every `expect` of every plan is checked against the model first; a cell the
 *   person changed since the agent read it refuses the whole apply (`stale`, nothing changed).
 *   Then each plan is applied in one transaction: only the cells it names change (a changed
 *   source as a splice of its changed middle, so the person's cursor and the unsaved typing in
 *   other cells stay), and the notebook is saved through its document context, so there is no
 *   "file changed on disk" dialog. Saving also saves the person's unsaved typing in other cells
 *   (as JupyterLab's autosave would): the file then holds what the tab shows.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { UiConnection, connectionFor, isKliKernel } from '../connection';
import type {
  ICellExpect,
  ICellUpdate,
  IModelApplyMsg,
  IModelReadMsg,
  INotebookPlan
} from '../protocol';

type Json = Record<string, unknown>;

/** The parts of a shared cell the apply uses (`@jupyter/ydoc`'s ISharedCell). */
interface ICellLike {
  readonly id: string;
  readonly cell_type: string;
  getSource(): string;
  updateSource(start: number, end: number, value?: string): void;
  setMetadata(metadata: Json): void;
  toJSON(): Json;
  setOutputs?(outputs: unknown[]): void;
  execution_count?: number | null;
  setAttachments?(attachments: unknown): void;
}

/** The parts of a shared notebook the apply uses (`@jupyter/ydoc`'s ISharedNotebook). */
interface INotebookLike {
  readonly cells: ICellLike[];
  nbformat_minor: number;
  setMetadata(metadata: Json): void;
  insertCell(index: number, cell: Json): unknown;
  deleteCell(index: number): void;
  transact(f: () => void): void;
  toJSON(): Json;
}

class Refused extends Error {
  constructor(
    readonly error: string,
    readonly path: string,
    readonly cell: string,
    text: string
  ) {
    super(text);
  }
}

function sourceOf(value: unknown): string {
  return Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '';
}

/** Replace `cell`'s source by `next`, changing only the middle that differs. */
export function spliceSource(cell: ICellLike, next: string): void {
  const old = cell.getSource();
  if (old === next) {
    return;
  }
  let start = 0;
  while (start < old.length && start < next.length && old[start] === next[start]) {
    start++;
  }
  let end = 0;
  while (
    end < old.length - start &&
    end < next.length - start &&
    old[old.length - 1 - end] === next[next.length - 1 - end]
  ) {
    end++;
  }
  cell.updateSource(start, old.length - end, next.slice(start, next.length - end));
}

function panelFor(tracker: INotebookTracker, path: string): NotebookPanel | null {
  return tracker.find(p => !p.isDisposed && p.context.path === path) ?? null;
}

function sharedOf(panel: NotebookPanel): INotebookLike | null {
  const model = panel.context.model;
  return model ? (model.sharedModel as unknown as INotebookLike) : null;
}

/** Throws Refused when a cell the plan touches is not what the agent read. */
function check(path: string, nb: INotebookLike, plan: INotebookPlan): void {
  const byId = new Map(nb.cells.map(c => [c.id, c]));
  const expect = plan.expect as Record<string, ICellExpect>;
  for (const [id, want] of Object.entries(expect)) {
    const cell = byId.get(id);
    if (!cell) {
      throw new Refused(
        'stale',
        path,
        id,
        `cell ${id} was deleted in the open tab since it was read`
      );
    }
    if (cell.getSource() !== want.source || cell.cell_type !== want.cell_type) {
      throw new Refused(
        'stale',
        path,
        id,
        `cell ${id} was changed in the open tab since it was read (the person's text is kept)`
      );
    }
  }
  for (const u of plan.update) {
    if (!byId.has(u.id)) {
      throw new Refused(
        'stale',
        path,
        u.id,
        `cell ${u.id} was deleted in the open tab since it was read`
      );
    }
  }
}

function updateCell(nb: INotebookLike, u: ICellUpdate): void {
  const at = nb.cells.findIndex(c => c.id === u.id);
  const cell = nb.cells[at];
  const next = u.cell as Json;
  if (u.keys.includes('cell_type') || u.keys.includes('id')) {
    nb.deleteCell(at);
    nb.insertCell(at, next);
    return;
  }
  for (const key of u.keys) {
    const value = next[key];
    if (key === 'source') {
      spliceSource(cell, sourceOf(value));
    } else if (key === 'outputs') {
      cell.setOutputs?.(Array.isArray(value) ? value : []);
    } else if (key === 'execution_count') {
      cell.execution_count = typeof value === 'number' ? value : null;
    } else if (key === 'metadata') {
      cell.setMetadata((value as Json) ?? {});
    } else if (key === 'attachments') {
      cell.setAttachments?.(value);
    }
  }
}

function applyPlan(nb: INotebookLike, plan: INotebookPlan): void {
  nb.transact(() => {
    if (plan.nbformat_minor !== undefined) {
      nb.nbformat_minor = plan.nbformat_minor;
    }
    if (plan.metadata !== undefined) {
      nb.setMetadata(plan.metadata as Json);
    }
    for (const u of plan.update) {
      updateCell(nb, u);
    }
    for (const id of plan.remove) {
      const at = nb.cells.findIndex(c => c.id === id);
      if (at >= 0) {
        nb.deleteCell(at);
      }
    }
    const at = new Map(plan.order.map((id, i) => [id, i]));
    for (const cell of plan.place) {
      const i = at.get(String((cell as Json).id)) ?? plan.order.length;
      const ids = nb.cells.map(c => c.id);
      let where = 0;
      for (let j = i - 1; j >= 0; j--) {
        const k = ids.indexOf(plan.order[j]);
        if (k >= 0) {
          where = k + 1;
          break;
        }
      }
      nb.insertCell(where, cell as Json);
    }
  });
}

function readModel(nb: INotebookLike): Json {
  const json = nb.toJSON();
  const cells = Array.isArray(json.cells) ? (json.cells as Json[]) : [];
  cells.forEach((c, i) => {
    if (!c.id && nb.cells[i]) {
      c.id = nb.cells[i].id;
    }
  });
  return json;
}

async function handle(
  tracker: INotebookTracker,
  conn: UiConnection,
  msg: IModelReadMsg | IModelApplyMsg
): Promise<void> {
  const reply = (fields: Json): void => {
    conn.notify('model_reply', { id: msg.id, ...fields });
  };
  const notOpen = (path: string): void =>
    reply({ ok: false, error: 'not_open', path, text: `${path} is not open in this browser` });
  if (msg.op === 'model_read') {
    const panel = panelFor(tracker, msg.path);
    const nb = panel && sharedOf(panel);
    if (!panel || !nb) {
      notOpen(msg.path);
      return;
    }
    reply({ ok: true, text: 'read', notebook: readModel(nb) });
    return;
  }
  const targets: [NotebookPanel, INotebookLike, INotebookPlan][] = [];
  for (const plan of msg.notebooks) {
    const panel = panelFor(tracker, plan.path);
    const nb = panel && sharedOf(panel);
    if (!panel || !nb) {
      notOpen(plan.path);
      return;
    }
    targets.push([panel, nb, plan]);
  }
  try {
    for (const [, nb, plan] of targets) {
      check(plan.path, nb, plan);
    }
  } catch (err) {
    if (err instanceof Refused) {
      reply({ ok: false, error: err.error, path: err.path, cell: err.cell, text: err.message });
      return;
    }
    throw err;
  }
  try {
    for (const [, nb, plan] of targets) {
      applyPlan(nb, plan);
    }
  } catch (err) {
    reply({ ok: false, error: 'failed', path: targets[0][2].path, text: String(err) });
    return;
  }
  let saved = true;
  let why = '';
  for (const [panel] of targets) {
    try {
      await panel.context.save();
    } catch (err) {
      saved = false;
      why = ` (saving ${panel.context.path} failed: ${String(err)})`;
    }
  }
  reply({ ok: true, saved, text: `applied in the open tab${why}` });
}

export const openModelPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kli-kernel:open-model',
  description: "Applies an agent's notebook edits to the open tab's model (no collaboration).",
  autoStart: true,
  requires: [],
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (!tracker) {
      return;
    }
    const connections = new Set<UiConnection>();
    const wasOpen = new WeakMap<UiConnection, boolean>();
    const paths = (): string[] => {
      const out: string[] = [];
      tracker.forEach(p => {
        if (!p.isDisposed && p.context.isReady) {
          out.push(p.context.path);
        }
      });
      return out;
    };
    const report = (conn: UiConnection): void => {
      conn.notify('notebooks', { paths: paths() });
    };
    const reportAll = (): void => {
      for (const conn of [...connections]) {
        if (conn.isDisposed) {
          connections.delete(conn);
        } else {
          report(conn);
        }
      }
    };
    const adopt = (panel: NotebookPanel): void => {
      const kernel = panel.sessionContext.session?.kernel;
      if (!kernel || !isKliKernel(kernel)) {
        return;
      }
      const conn = connectionFor(kernel);
      if (connections.has(conn)) {
        return;
      }
      connections.add(conn);
      conn.changed.connect(() => {
        const open = conn.status === 'open';
        if (open && !wasOpen.get(conn)) {
          report(conn);
        }
        wasOpen.set(conn, open);
      });
      conn.modelRequest.connect((_, msg) => {
        handle(tracker, conn, msg).catch(err => {
          conn.notify('model_reply', { id: msg.id, ok: false, error: 'failed', text: String(err) });
        });
      });
      conn.ensureOpen();
      if (conn.status === 'open') {
        wasOpen.set(conn, true);
        report(conn);
      }
    };
    const watch = (panel: NotebookPanel): void => {
      panel.sessionContext.kernelChanged.connect(() => adopt(panel));
      void panel.sessionContext.ready.then(() => adopt(panel));
      void panel.context.ready.then(reportAll);
      panel.context.pathChanged.connect(reportAll);
      panel.disposed.connect(() => setTimeout(reportAll, 0));
    };
    tracker.forEach(watch);
    tracker.widgetAdded.connect((_, panel) => watch(panel));
    void app;
  }
};
