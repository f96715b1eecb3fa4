import { YNotebook } from '@jupyter/ydoc';
import { describe, expect, it } from 'vitest';
import {
  INotebookLike,
  Refused,
  applyPlan,
  check,
  readModel,
  spliceSource
} from '../model/openmodel';
import type { INotebookPlan } from '../protocol';

// A real shared notebook (@jupyter/ydoc's YNotebook, what a JupyterLab tab's model holds).
function notebook(cells: [string, string][]): { yn: YNotebook; nb: INotebookLike } {
  const yn = YNotebook.create({});
  yn.insertCells(
    0,
    cells.map(([id, source]) => ({
      cell_type: 'code',
      id,
      source,
      metadata: {},
      outputs: [],
      execution_count: null
    }))
  );
  return { yn, nb: yn as unknown as INotebookLike };
}

const sources = (yn: YNotebook): string[] => yn.cells.map(c => c.getSource());
const ids = (yn: YNotebook): string[] => yn.cells.map(c => c.id);

function plan(fields: Partial<INotebookPlan>): INotebookPlan {
  return { path: 'nb.ipynb', expect: {}, update: [], remove: [], place: [], order: [], ...fields };
}

function code(id: string, source: string): Record<string, unknown> {
  return { cell_type: 'code', id, source, metadata: {}, outputs: [], execution_count: null };
}

describe('spliceSource', () => {
  it('changes only the middle that differs, keeping the text around it', () => {
    const { yn } = notebook([['a', 'x = 1\ny = 2\nz = 3']]);
    const cell = yn.cells[0];
    const deltas: unknown[] = [];
    cell.ysource.observe(e => deltas.push(e.delta));
    spliceSource(cell as never, 'x = 1\ny = 20\nz = 3');
    expect(cell.getSource()).toBe('x = 1\ny = 20\nz = 3');
    expect(deltas).toEqual([[{ retain: 11 }, { insert: '0' }]]);
  });
});

describe('check', () => {
  it('refuses as stale a cell whose source changed since the read, naming it', () => {
    const { nb } = notebook([
      ['a', 'p = 1 + 10'],
      ['b', 'q = 2']
    ]);
    const p = plan({ expect: { a: { cell_type: 'code', source: 'p = 1' } } });
    expect(() => check('nb.ipynb', nb, p)).toThrowError(/cell a was changed in the open tab/);
    try {
      check('nb.ipynb', nb, p);
    } catch (err) {
      expect(err).toBeInstanceOf(Refused);
      expect((err as Refused).cell).toBe('a');
    }
  });

  it('refuses an update of a cell deleted since the read', () => {
    const { nb } = notebook([['a', 'p = 1']]);
    const p = plan({ update: [{ id: 'gone', cell: code('gone', ''), keys: ['outputs'] }] });
    expect(() => check('nb.ipynb', nb, p)).toThrowError(/cell gone was deleted/);
  });

  it('passes when the expected cells are as read, whatever other cells hold', () => {
    const { nb } = notebook([
      ['a', 'typed by the person'],
      ['b', 'q = 2']
    ]);
    expect(() =>
      check('nb.ipynb', nb, plan({ expect: { b: { cell_type: 'code', source: 'q = 2' } } }))
    ).not.toThrow();
  });
});

describe('applyPlan', () => {
  it('updates, removes and places only the cells the plan names', () => {
    const { yn, nb } = notebook([
      ['a', 'person typing'],
      ['b', 'q = 2'],
      ['c', 'gone = 1'],
      ['d', 'd = 4']
    ]);
    applyPlan(
      nb,
      plan({
        update: [{ id: 'b', cell: code('b', 'q = 20'), keys: ['source'] }],
        remove: ['c', 'd'],
        place: [code('d', 'd = 4'), code('new', 'n = 0')],
        order: ['d', 'a', 'b', 'new']
      })
    );
    expect(ids(yn)).toEqual(['d', 'a', 'b', 'new']);
    expect(sources(yn)).toEqual(['d = 4', 'person typing', 'q = 20', 'n = 0']);
  });

  it('sets outputs, the execution count and the notebook metadata', () => {
    const { yn, nb } = notebook([['a', 'print(1)']]);
    const out = { output_type: 'stream', name: 'stdout', text: '1\n' };
    applyPlan(
      nb,
      plan({
        update: [
          {
            id: 'a',
            cell: { ...code('a', 'print(1)'), outputs: [out], execution_count: 3 },
            keys: ['execution_count', 'outputs']
          }
        ],
        order: ['a'],
        metadata: { kli: true },
        nbformat_minor: 5
      })
    );
    const cell = readModel(nb).cells as Record<string, unknown>[];
    expect(cell[0].execution_count).toBe(3);
    expect(cell[0].outputs).toEqual([out]);
    expect(yn.getMetadata()).toEqual({ kli: true });
  });

  it('replaces a cell whose type changed, in its place', () => {
    const { yn, nb } = notebook([
      ['a', 'x'],
      ['b', '# title']
    ]);
    applyPlan(
      nb,
      plan({
        update: [
          {
            id: 'b',
            cell: { cell_type: 'markdown', id: 'b', source: '# title', metadata: {} },
            keys: ['cell_type', 'execution_count', 'outputs']
          }
        ],
        order: ['a', 'b']
      })
    );
    expect(yn.cells.map(c => c.cell_type)).toEqual(['code', 'markdown']);
    expect(ids(yn)).toEqual(['a', 'b']);
  });
});

describe('readModel', () => {
  it('gives every cell its id', () => {
    const { nb } = notebook([['a', 'x']]);
    const cells = readModel(nb).cells as Record<string, unknown>[];
    expect(cells.map(c => c.id)).toEqual(['a']);
  });
});
