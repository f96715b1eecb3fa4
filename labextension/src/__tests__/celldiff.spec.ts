import { describe, expect, it } from 'vitest';
import {
  ICellChange,
  cellChanges,
  headWords,
  heldRuns,
  keptDecided,
  kernelPath,
  splitCell
} from '../model/celldiff';
import { INITIAL_STATE, IActivityState, reduce } from '../model/store';
import type { ICandidate, IFileChange, IToolEvent } from '../protocol';

function written(path: string, before: string, after: string): IFileChange {
  return { path, status: 'written', before, after };
}

function ev(id: string, files: IFileChange[], details: Record<string, unknown> = {}): IToolEvent {
  return {
    kind: 'call',
    id,
    tool: 'edit',
    ok: true,
    session: 's2',
    session_label: 'bot',
    details: { files, ...details }
  };
}

function withEvents(...events: IToolEvent[]): IActivityState {
  return events.reduce((s, event) => reduce(s, { type: 'event', event }), INITIAL_STATE);
}

describe('splitCell', () => {
  it('splits a cell address and refuses a plain path', () => {
    expect(splitCell('dir/nb.ipynb#c-1')).toEqual(['dir/nb.ipynb', 'c-1']);
    expect(splitCell('a.py')).toBeNull();
    expect(splitCell('nb.ipynb#')).toBeNull();
  });
});

describe('kernelPath', () => {
  it("is the notebook's path relative to the kernel's root under the server's root", () => {
    expect(kernelPath('work/nb.ipynb', '/srv/root/work', '/srv/root')).toBe('nb.ipynb');
    expect(kernelPath('work/sub/nb.ipynb', '/srv/root/work', '/srv/root')).toBe('sub/nb.ipynb');
    expect(kernelPath('nb.ipynb', '/srv/root', '/srv/root/')).toBe('nb.ipynb');
  });

  it('is null for a notebook outside the kernel root or a root outside the server', () => {
    expect(kernelPath('other/nb.ipynb', '/srv/root/work', '/srv/root')).toBeNull();
    expect(kernelPath('nb.ipynb', '/elsewhere', '/srv/root')).toBeNull();
  });

  it("falls back to the file name (a kernel in the notebook's folder) without the roots", () => {
    expect(kernelPath('work/nb.ipynb', null, '/srv/root')).toBe('nb.ipynb');
    expect(kernelPath('work/nb.ipynb', '/srv/root/work', '')).toBe('nb.ipynb');
  });
});

describe('cellChanges', () => {
  it("puts an applied cell edit on its cell, the latest of a cell only, not other notebooks'", () => {
    const s = withEvents(
      ev('e1', [written('nb.ipynb#a', 'x = 1', 'x = 2')]),
      ev('e2', [written('nb.ipynb#a', 'x = 2', 'x = 3'), written('nb.ipynb#b', 'y', 'z')]),
      ev('e3', [written('other.ipynb#a', 'q', 'r'), written('a.py', '1', '2')])
    );
    const got = cellChanges(s, 'nb.ipynb');
    expect([...got.keys()].sort()).toEqual(['a', 'b']);
    expect(got.get('a')!.map(c => [c.key, c.kind, c.file.after, c.who])).toEqual([
      ['e2:nb.ipynb#a', 'applied', 'x = 3', 'bot']
    ]);
  });

  it('keeps a dismissed edit dismissed: older edits of the cell do not come back', () => {
    const s = withEvents(
      ev('e1', [written('nb.ipynb#a', 'x = 1', 'x = 2')]),
      ev('e2', [written('nb.ipynb#a', 'x = 2', 'x = 3')])
    );
    expect(cellChanges(s, 'nb.ipynb', new Set(['e2:nb.ipynb#a'])).size).toBe(0);
  });

  it("leaves out an Accept's written file (its proposal shows the decision)", () => {
    const accept = ev('e4', [{ ...written('nb.ipynb#a', 'x', 'y'), candidate: 'p1' }], {
      candidate: 'p1',
      resolved: { candidate: 'p1', status: 'written' }
    });
    expect(cellChanges(withEvents(accept), 'nb.ipynb').size).toBe(0);
  });

  it('puts a held cell edit and a repair preview on their cells, with their candidate ids', () => {
    const held: ICandidate = {
      candidate: 'p3',
      kind: 'call',
      path: 'nb.ipynb#a',
      tool: 'ws_edit',
      session: 's2',
      session_label: 'bot',
      files: [
        { path: 'nb.ipynb#a', status: 'preview', before: 'x = 1', after: 'x = 10' },
        { path: 'notes.md', status: 'preview', before: '', after: 'n\n' }
      ]
    };
    let s = reduce(INITIAL_STATE, { type: 'proposed', candidate: held });
    s = reduce(s, {
      type: 'event',
      event: ev('e5', [
        {
          path: 'nb.ipynb#b',
          status: 'preview',
          before: 'f(',
          after: 'f()',
          candidate: 'c2',
          reason: 'policy_preview'
        }
      ])
    });
    const got = cellChanges(s, 'nb.ipynb');
    expect(got.get('a')!.map(c => [c.kind, c.candidate, c.file.after, c.file.candidate])).toEqual([
      ['proposal', 'p3', 'x = 10', 'p3']
    ]);
    expect(got.get('b')!.map(c => [c.kind, c.candidate, c.file.status])).toEqual([
      ['proposal', 'c2', 'preview']
    ]);
    // Decided: no longer pending, so no longer wanted (the widget folds the one it showed).
    s = reduce(s, {
      type: 'resolved',
      msg: {
        op: 'resolved',
        candidate: 'p3',
        status: 'written',
        text: '',
        by: 'ui',
        reason: 'accepted'
      }
    });
    expect(cellChanges(s, 'nb.ipynb').has('a')).toBe(false);
  });

  it("keeps the hello's root", () => {
    const s = reduce(INITIAL_STATE, {
      type: 'hello',
      msg: {
        op: 'hello',
        protocol: 1,
        events: [],
        pending: [],
        sessions: [],
        tools: [],
        root: '/r'
      }
    });
    expect(s.root).toBe('/r');
  });
});

describe('heldRuns', () => {
  const held = (args: Record<string, unknown>): ICandidate => ({
    candidate: 'p7',
    kind: 'call',
    path: '',
    tool: 'run_cells',
    action: 'eval',
    args
  });

  it('names the cells a held run_cells runs, in each of its forms', () => {
    expect(heldRuns(held({ path: 'nb.ipynb', cell: 'a' }))).toEqual({
      notebook: 'nb.ipynb',
      cells: [['a', 'Accept runs this cell']]
    });
    expect(heldRuns(held({ path: 'nb.ipynb#b' }))!.cells).toEqual([['b', 'Accept runs this cell']]);
    expect(heldRuns(held({ path: 'nb.ipynb', cells: ['a', 'nb.ipynb#b'] }))!.cells).toEqual([
      ['a', 'Accept runs cells a, b (this is 1 of 2)'],
      ['b', 'Accept runs cells a, b (this is 2 of 2)']
    ]);
    expect(heldRuns(held({ path: 'nb.ipynb', from: 'c' }))!.cells).toEqual([
      ['c', 'Accept runs this cell and every cell after it']
    ]);
  });

  it('is null for other calls and for a run naming no cell', () => {
    expect(heldRuns({ ...held({ path: 'nb.ipynb', cell: 'a' }), tool: 'eval' })).toBeNull();
    expect(heldRuns(held({ path: 'nb.ipynb' }))).toBeNull();
  });

  it('puts a held run on its cells as a run, next to other proposals', () => {
    const s = reduce(INITIAL_STATE, {
      type: 'proposed',
      candidate: held({ path: 'nb.ipynb', cells: ['a', 'b'] })
    });
    const got = cellChanges(s, 'nb.ipynb');
    expect(got.get('b')!.map(c => [c.kind, c.candidate, c.runs])).toEqual([
      ['run', 'p7', 'Accept runs cells a, b (this is 2 of 2)']
    ]);
    expect(cellChanges(s, 'other.ipynb').size).toBe(0);
  });
});

describe('held cells ops', () => {
  it('places a held insert by its anchor and shows a held delete as every line removed', () => {
    const insert: ICandidate = {
      candidate: 'p8',
      kind: 'call',
      path: 'nb.ipynb#new1',
      tool: 'cells',
      args: { path: 'nb.ipynb', op: 'insert', anchor: 'a', where: 'after', source: 'n = 1' },
      files: [{ path: 'nb.ipynb#new1', status: 'preview', before: null, after: 'n = 1' }]
    };
    const del: ICandidate = {
      candidate: 'p9',
      kind: 'call',
      path: 'nb.ipynb#b',
      tool: 'cells',
      args: { path: 'nb.ipynb', op: 'delete', cell: 'b' },
      files: [{ path: 'nb.ipynb#b', status: 'preview', before: 'y = 2', after: null }]
    };
    let s = reduce(INITIAL_STATE, { type: 'proposed', candidate: insert });
    s = reduce(s, { type: 'proposed', candidate: del });
    const got = cellChanges(s, 'nb.ipynb');
    expect(got.get('new1')!.map(c => c.placement)).toEqual([{ anchor: 'a', where: 'after' }]);
    expect(got.get('b')!.map(c => [c.placement, c.file.before, c.file.after])).toEqual([
      [undefined, 'y = 2', '']
    ]);
    const atEnd = { ...insert, candidate: 'p10', args: { path: 'nb.ipynb', op: 'insert' } };
    const end = cellChanges(
      reduce(INITIAL_STATE, { type: 'proposed', candidate: atEnd }),
      'nb.ipynb'
    );
    expect(end.get('new1')!.map(c => c.placement)).toEqual([{ anchor: null, where: 'end' }]);
  });
});

describe('headWords', () => {
  const applied = (who: string, tool: string): ICellChange => ({
    key: 'e1:nb.ipynb#c1',
    kind: 'applied',
    cellId: 'c1',
    file: written('nb.ipynb#c1', 'a', 'b'),
    candidate: null,
    who,
    tool,
    time: null
  });

  it('says who did what: the person is "you", an undo is an undo', () => {
    expect(headWords(applied('magic', 'undo'))).toBe('Undone by you');
    expect(headWords(applied('magic', 'redo'))).toBe('Redone by you');
    expect(headWords(applied('chat a.chat turn 2 (undo)', 'undo'))).toBe(
      'Undone by chat a.chat turn 2'
    );
    expect(headWords(applied('cell agent', 'edit'))).toBe('Changed by cell agent (edit)');
    expect(headWords(applied('magic', 'edit'))).toBe('Changed by you (edit)');
  });
});

describe('keptDecided', () => {
  it('keeps only the newest decided proposal, and only while nothing else is on the cell', () => {
    expect([...keptDecided(new Set(), ['p1', 'p2', 'p3'])]).toEqual(['p3']);
    expect([...keptDecided(new Set(['e9:nb.ipynb#c1']), ['p1', 'p2'])]).toEqual([]);
    expect([...keptDecided(new Set(), [])]).toEqual([]);
  });
});
