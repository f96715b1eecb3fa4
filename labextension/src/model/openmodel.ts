/**
 * The open model's apply, on a shared notebook (`@jupyter/ydoc`'s YNotebook, structurally):
 * check a plan's `expect` against the model, then apply only the cells it names. Pure: no DOM,
 * no JupyterLab (plugins/openmodel.ts wires it to the tabs).
 */
import type { ICellExpect, ICellUpdate, INotebookPlan } from '../protocol';

export type Json = Record<string, unknown>;

/** The parts of a shared cell the apply uses (`@jupyter/ydoc`'s ISharedCell). */
export interface ICellLike {
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
export interface INotebookLike {
  readonly cells: ICellLike[];
  nbformat_minor: number;
  setMetadata(metadata: Json): void;
  insertCell(index: number, cell: Json): unknown;
  deleteCell(index: number): void;
  transact(f: () => void): void;
  toJSON(): Json;
}

export class Refused extends Error {
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

/** Throws Refused when a cell the plan touches is not what the agent read. */
export function check(path: string, nb: INotebookLike, plan: INotebookPlan): void {
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

function setFields(cell: ICellLike, u: ICellUpdate): void {
  const next = u.cell as Json;
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

/**
 * Apply a checked plan in one transaction. Inside a transaction the notebook's `cells` list is
 * not updated yet (it follows the Y array's events, at the end), so positions are tracked here
 * in `order`, as the kernel's Y-document apply does.
 */
export function applyPlan(nb: INotebookLike, plan: INotebookPlan): void {
  const order = nb.cells.map(c => c.id);
  const byId = new Map(nb.cells.map(c => [c.id, c]));
  nb.transact(() => {
    if (plan.nbformat_minor !== undefined) {
      nb.nbformat_minor = plan.nbformat_minor;
    }
    if (plan.metadata !== undefined) {
      nb.setMetadata(plan.metadata as Json);
    }
    for (const u of plan.update) {
      const at = order.indexOf(u.id);
      const cell = byId.get(u.id);
      if (at < 0 || !cell) {
        continue; // check() refused this already
      }
      if (u.keys.includes('cell_type') || u.keys.includes('id')) {
        nb.deleteCell(at);
        nb.insertCell(at, u.cell as Json);
        order[at] = String((u.cell as Json).id ?? u.id);
      } else {
        setFields(cell, u);
      }
    }
    for (const id of plan.remove) {
      const at = order.indexOf(id);
      if (at >= 0) {
        nb.deleteCell(at);
        order.splice(at, 1);
      }
    }
    const rank = new Map(plan.order.map((id, i) => [id, i]));
    for (const cell of plan.place) {
      const id = String((cell as Json).id);
      const i = rank.get(id) ?? plan.order.length;
      let where = 0;
      for (let j = i - 1; j >= 0; j--) {
        const k = order.indexOf(plan.order[j]);
        if (k >= 0) {
          where = k + 1;
          break;
        }
      }
      nb.insertCell(where, cell as Json);
      order.splice(where, 0, id);
    }
  });
}

export function readModel(nb: INotebookLike): Json {
  const json = nb.toJSON();
  const cells = Array.isArray(json.cells) ? (json.cells as Json[]) : [];
  cells.forEach((c, i) => {
    if (!c.id && nb.cells[i]) {
      c.id = nb.cells[i].id;
    }
  });
  return json;
}
