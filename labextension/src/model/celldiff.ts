/**
 * Which changes of the activity state belong on which cell of an open notebook. Pure: the
 * cell widgets (widgets/celldiff.ts) render this.
 *
 * A cell change is a FILE whose path is `NOTEBOOK#CELL_ID` (root-relative, as every tool names
 * it): an applied edit (`edit`, `ws_edit`, `ws_patch`, `cells`: status `written`), or a pending
 * proposal — a repair preview or a call held for review — whose file is that cell (the one queue
 * of the store).
 */
import type { ICandidate, IFileChange, IToolEvent } from '../protocol';
import type { IActivityState } from './store';
import { MAGIC_SESSION_LABEL } from './timeline';

export interface ICellChange {
  /** Stable across renders: the candidate id of a proposal, `EVENT_ID:PATH` of an applied edit. */
  key: string;
  /** `run`: an agent's `run_cells` held for review (approval mode, kind `eval`): no diff,
   * Accept runs the cells. */
  kind: 'applied' | 'proposal' | 'run';
  cellId: string;
  /** The cell's change: before / after are the cell's source. */
  file: IFileChange;
  /** A proposal's id (its Accept / Reject go to the kernel's queue under it). */
  candidate: string | null;
  /** Who made it (a session label) and with which tool. */
  who: string;
  tool: string;
  /** Unix seconds, when known. */
  time: number | null;
  /** A held run: what Accept runs, said from this cell ("this cell", "cells a, b (this is 2 of
   * 2)", "this cell and every cell after it"). */
  runs?: string;
  /** A held `cells` insert: the cell it goes after / before (`anchor`, or `start` / `end`),
   * where the cell view shows it while the new cell does not exist. */
  placement?: { anchor: string | null; where: string };
}

/** Where a held `cells` insert puts its new cell (null: not an insert). */
function insertPlacement(c: ICandidate): ICellChange['placement'] {
  const args = c.args ?? {};
  if (c.tool !== 'cells' || args.op !== 'insert') {
    return undefined;
  }
  const anchor = typeof args.anchor === 'string' && args.anchor ? args.anchor : null;
  const where =
    typeof args.where === 'string' && args.where ? args.where : anchor ? 'after' : 'end';
  return { anchor: anchor ? (splitCell(anchor)?.[1] ?? anchor) : null, where };
}

/**
 * The cells a held `run_cells` names in its notebook, with the words said on each: `cell` (an id,
 * or `nb.ipynb#ID` in `path` or `cell`), `cells` (a list) or `from` (said on its first cell).
 */
export function heldRuns(c: ICandidate): { notebook: string; cells: [string, string][] } | null {
  if (c.tool !== 'run_cells' || !c.args) {
    return null;
  }
  const args = c.args;
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const inPath = splitCell(str(args.path));
  const notebook = inPath ? inPath[0] : str(args.path);
  const own = (id: string): string => {
    const cell = splitCell(id);
    return cell && cell[0] === notebook ? cell[1] : id;
  };
  let cells: [string, string][] = [];
  if (Array.isArray(args.cells) && args.cells.length) {
    const ids = args.cells.map(x => own(str(x))).filter(Boolean);
    cells = ids.map((id, i) => [
      id,
      ids.length === 1
        ? 'Accept runs this cell'
        : `Accept runs cells ${ids.join(', ')} (this is ${i + 1} of ${ids.length})`
    ]);
  } else if (str(args.from)) {
    cells = [[own(str(args.from)), 'Accept runs this cell and every cell after it']];
  } else if (str(args.cell) || inPath) {
    cells = [[own(str(args.cell)) || inPath![1], 'Accept runs this cell']];
  }
  return notebook && cells.length ? { notebook, cells } : null;
}

/** `nb.ipynb#c1` → [`nb.ipynb`, `c1`]; a path without a cell → null. */
export function splitCell(path: string): [string, string] | null {
  const at = path.indexOf('#');
  if (at <= 0 || at === path.length - 1) {
    return null;
  }
  return [path.slice(0, at), path.slice(at + 1)];
}

function normalize(p: string): string {
  const parts: string[] = [];
  for (const part of p.replace(/\\/g, '/').split('/')) {
    if (!part || part === '.') {
      continue;
    }
    if (part === '..') {
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts.join('/');
}

/**
 * The path the kernel's tools give a notebook the server shows as `serverPath`: relative to the
 * kernel's root (`root`, absolute, from the `kli.ui` hello) once the server's root
 * (`serverRoot`, absolute, JupyterLab's page config) is known; null when the notebook lies
 * outside the kernel's root (no tool of that kernel can change it). Without either root, the
 * kernel is taken to run in the notebook's own folder (Jupyter starts kernels there), so the
 * path is the notebook's file name.
 */
export function kernelPath(
  serverPath: string,
  root?: string | null,
  serverRoot?: string
): string | null {
  const nb = normalize(serverPath);
  if (!root || !serverRoot) {
    return nb.split('/').pop() ?? nb;
  }
  const r = normalize(root);
  const s = normalize(serverRoot);
  let rootRel: string;
  if (r === s) {
    rootRel = '';
  } else if (r.startsWith(s + '/') || s === '') {
    rootRel = s === '' ? r : r.slice(s.length + 1);
  } else {
    return null; // the kernel's root is not under the server's: paths cannot be matched
  }
  if (!rootRel) {
    return nb;
  }
  return nb.startsWith(rootRel + '/') ? nb.slice(rootRel.length + 1) : null;
}

/** The files of a proposal (a held call may change several; a repair preview has one). */
function proposalFiles(c: ICandidate): IFileChange[] {
  if (c.files?.length) {
    return c.files;
  }
  return c.file ? [c.file] : [];
}

/** An event's applied cell changes: written files with no candidate (a decided proposal's
 * Accept names its candidate: the proposal's own item shows that). */
function appliedFiles(event: IToolEvent): IFileChange[] {
  const details = event.details ?? {};
  if (details.resolved || typeof details.candidate === 'string') {
    return [];
  }
  const files = Array.isArray(details.files) ? (details.files as IFileChange[]) : [];
  return files.filter(
    f =>
      f &&
      typeof f.path === 'string' &&
      f.status === 'written' &&
      !f.candidate &&
      typeof f.after === 'string'
  );
}

/**
 * The changes to show on each cell of the notebook the kernel calls `notebook`, by cell id:
 * every pending proposal of one of its cells (oldest first), then the latest applied edit of
 * the cell (an older one is in the activity panel), unless `dismissed` has its key.
 */
export function cellChanges(
  state: IActivityState,
  notebook: string,
  dismissed: ReadonlySet<string> = new Set()
): Map<string, ICellChange[]> {
  const out = new Map<string, ICellChange[]>();
  const add = (change: ICellChange): void => {
    const list = out.get(change.cellId) ?? [];
    list.push(change);
    out.set(change.cellId, list);
  };
  for (const c of state.pending) {
    const runs = heldRuns(c);
    if (runs && runs.notebook === notebook && !dismissed.has(c.candidate)) {
      for (const [cellId, words] of runs.cells) {
        add({
          key: c.candidate,
          kind: 'run',
          cellId,
          // The proposal's own path: Accept checks the kernel's candidate by it (matchPending).
          file: { path: c.path, status: 'preview', candidate: c.candidate },
          candidate: c.candidate,
          who: c.session_label || c.session || '',
          tool: c.tool ?? 'run_cells',
          time: typeof c.time === 'number' ? c.time : null,
          runs: words
        });
      }
    }
    for (const file of proposalFiles(c)) {
      const cell = splitCell(String(file.path ?? ''));
      if (cell && cell[0] === notebook && !dismissed.has(c.candidate)) {
        add({
          key: c.candidate,
          kind: 'proposal',
          cellId: cell[1],
          // A held delete has no text after: the diff shows every line removed.
          file: {
            ...file,
            status: 'preview',
            candidate: c.candidate,
            after: file.after ?? (typeof file.before === 'string' ? '' : file.after)
          },
          candidate: c.candidate,
          who: c.session_label || c.session || '',
          tool: c.tool ?? 'edit',
          time: typeof c.time === 'number' ? c.time : null,
          placement: insertPlacement(c)
        });
      }
    }
  }
  const latest = new Map<string, ICellChange>();
  for (const e of state.events) {
    for (const file of appliedFiles(e)) {
      const cell = splitCell(file.path);
      const key = `${e.id}:${file.path}`;
      if (cell && cell[0] === notebook) {
        latest.set(cell[1], {
          key,
          kind: 'applied',
          cellId: cell[1],
          file,
          candidate: null,
          who: e.session_label || e.session || '',
          tool: e.tool,
          time: typeof e.time === 'number' ? e.time : null
        });
      }
    }
  }
  for (const change of latest.values()) {
    // A dismissed edit stays dismissed: the older edits of its cell do not come back.
    if (!dismissed.has(change.key)) {
      add(change);
    }
  }
  return out;
}

/** Who, as a person reads it: the person's own session (their magics and the panel's buttons)
 * is "you"; a session made to undo ("chat … turn 2 (undo)") is named without "(undo)" where
 * the words already say it was an undo. */
export function whoWords(who: string, tool: string): string {
  if (who === MAGIC_SESSION_LABEL) {
    return 'you';
  }
  return (tool === 'undo' || tool === 'redo') && who.endsWith(' (undo)')
    ? who.slice(0, -' (undo)'.length)
    : who;
}

/** The item's head: who changed the cell with which tool; a proposal, once decided, without
 * "not written yet" (the decision's words follow). */
export function headWords(c: ICellChange, decided = false): string {
  const who = c.who ? ` by ${whoWords(c.who, c.tool)}` : '';
  if (c.placement) {
    const at =
      c.placement.where === 'before' || c.placement.where === 'start'
        ? 'before this one'
        : 'after this one';
    return `Proposed new cell ${c.candidate}${who} (${c.tool}), ${at}${decided ? '' : ': not written yet'}`;
  }
  if (c.kind === 'applied') {
    if (c.tool === 'undo' || c.tool === 'redo') {
      return `${c.tool === 'undo' ? 'Undone' : 'Redone'}${who}`;
    }
    return `Changed${who} (${c.tool})`;
  }
  if (c.kind === 'run') {
    return `Run proposed ${c.candidate}${who} (${c.tool})${decided ? '' : ': not run yet'}`;
  }
  const what = c.candidate?.startsWith('c') ? 'Repair preview' : 'Proposed change';
  return `${what} ${c.candidate}${who} (${c.tool})${decided ? '' : ': not written yet'}`;
}

/**
 * Which decided proposals a cell keeps showing (folded, with their decision): only the newest,
 * and only while nothing else is shown on the cell — an Accept's applied edit, or a newer
 * proposal, takes its place — so decided banners do not pile up. `wanted`: the keys the cell
 * shows now; `decided`: its decided proposals' keys, oldest first.
 */
export function keptDecided(wanted: ReadonlySet<string>, decided: readonly string[]): Set<string> {
  const open = decided.filter(k => !wanted.has(k));
  const others = [...wanted].filter(k => !decided.includes(k));
  return new Set(others.length || !open.length ? [] : [open[open.length - 1]]);
}
