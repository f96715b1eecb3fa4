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
import type { IModelApplyMsg, IModelReadMsg, INotebookPlan } from '../protocol';
import { INotebookLike, Json, Refused, applyPlan, check, readModel } from '../model/openmodel';

function panelFor(tracker: INotebookTracker, path: string): NotebookPanel | null {
  return tracker.find(p => !p.isDisposed && p.context.path === path) ?? null;
}

function sharedOf(panel: NotebookPanel): INotebookLike | null {
  const model = panel.context.model;
  return model ? (model.sharedModel as unknown as INotebookLike) : null;
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
