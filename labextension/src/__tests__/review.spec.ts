import { readFileSync } from 'fs';
import { join } from 'path';
import { describe, expect, it } from 'vitest';
import { countChanges } from '../model/linediff';
import { bundleHead, fileToDiffModel, freshAnchors, shownFiles } from '../model/diff';
import { DecisionState, decidedWord, decisionText } from '../model/decision';
import { clipStart, eventToRow } from '../model/summary';
import { DEFAULT_PANEL_WIDTH, rememberedWidth, sizesWith } from '../model/width';

interface ICase {
  name: string;
  before: string;
  after: string;
  added: number;
  removed: number;
}

// The fixture the kernel's count_changes is tested against too (one count, two languages).
const CASES: ICase[] = JSON.parse(
  readFileSync(join(__dirname, '../../../tests/fixtures/linecount/cases.json'), 'utf8')
).cases;

describe('countChanges', () => {
  it.each(CASES.map(c => [c.name, c] as const))('%s', (_, c) => {
    expect(countChanges(c.before, c.after)).toEqual({ added: c.added, removed: c.removed });
  });
});

describe('the diff header counts', () => {
  it('count the lines that differ, not the range a patch replaced', () => {
    const before = 'a\nb\nc\n';
    const after = 'a\nb\nx\ny\nz\nw\nc\n';
    const m = fileToDiffModel({
      path: 'a.py',
      status: 'preview',
      before,
      after,
      added: 6,
      removed: 2
    });
    expect([m.added, m.removed]).toEqual([4, 0]);
  });

  it('keep the kernel numbers when there are no texts to count', () => {
    const m = fileToDiffModel({
      path: 'big.py',
      status: 'written',
      too_large: true,
      added: 7,
      removed: 3
    });
    expect([m.added, m.removed]).toEqual([7, 3]);
  });
});

describe('one decided preview reads as one decided preview', () => {
  const stale = { path: 'a.py', status: 'rejected', before: 'a\n', after: null, reason: 'stale' };
  const unread = { path: 'u.py', status: 'rejected', before: null, after: null, reason: 'unread' };
  const preview = { path: 'a.py', status: 'preview', before: 'a\n', after: 'b\n', candidate: 'c1' };

  it('shows no card for a file refused before anything was proposed', () => {
    expect(shownFiles([stale, unread])).toEqual([]);
    const collateral = { ...stale, after: 'x\n', reason: 'patch_rejected' };
    expect(shownFiles([collateral])).toEqual([collateral]);
  });

  it('a result of previews reads as a preview without its text for the agent', () => {
    expect(bundleHead(false, 'Not written: … edit {"accept_repair": "c1"}', [preview])).toEqual({
      outcome: 'preview',
      showText: false
    });
    expect(bundleHead(false, 'edit rejected: stale anchor', [])).toEqual({
      outcome: 'error',
      showText: true
    });
  });

  it('the head takes the decision once every preview is decided', () => {
    const d = (state: DecisionState) => ({ state, text: '', by: '' });
    expect(decidedWord([d('open')])).toBeNull();
    expect(decidedWord([d('written')])).toBe('written');
    expect(decidedWord([d('rejected'), d('rejected')])).toBe('rejected');
    expect(decidedWord([d('written'), d('busy')])).toBeNull();
    expect(decidedWord([d('written'), d('rejected')])).toBe('decided');
    expect(decidedWord([])).toBeNull();
  });
});

describe('the activity panel width', () => {
  it('opens at a usable width unless one was remembered', () => {
    expect(rememberedWidth(null)).toBe(DEFAULT_PANEL_WIDTH);
    expect(DEFAULT_PANEL_WIDTH).toBeGreaterThanOrEqual(400);
    expect(rememberedWidth('512.4')).toBe(512);
    expect(rememberedWidth('12')).toBe(DEFAULT_PANEL_WIDTH);
    expect(rememberedWidth('wide')).toBe(DEFAULT_PANEL_WIDTH);
  });

  it('takes the room from the widest other area', () => {
    expect(sizesWith([200, 1085, 215], 2, 420)).toEqual([200, 880, 420]);
    expect(sizesWith([0, 1300, 420], 2, 420)).toBeNull();
    // never more than MAX_PANEL_SHARE of the whole
    expect(sizesWith([0, 1000, 200], 2, 5000)).toEqual([0, 480, 720]);
  });
});

describe('a row of file paths', () => {
  it('is cut from the left, keeping the file name', () => {
    const path =
      'deeply/nested/package/with/many/levels/of/folders/and/more/folders/module_name.py';
    const row = eventToRow({
      id: 1,
      tool: 'edit',
      ok: true,
      details: { files: [{ path: path + 'x', status: 'written' }] }
    } as never);
    expect(row.summaryIsPaths).toBe(true);
    expect(row.summary.endsWith('module_name.pyx')).toBe(true);
    expect(row.summary.startsWith('…')).toBe(true);
    expect(clipStart('abc', 80)).toBe('abc');
    // A read's path argument too (its summary argument is `path`).
    const read = eventToRow(
      { id: 2, tool: 'read', ok: true, args: { path: path + 'y', start: 1 } } as never,
      ['path']
    );
    expect(read.summaryIsPaths).toBe(true);
    expect(read.summary.endsWith('module_name.pyy')).toBe(true);
    const bash = eventToRow({ id: 3, tool: 'bash', ok: true, args: { command: 'ls' } } as never, [
      'command'
    ]);
    expect(bash.summaryIsPaths).toBe(false);
    // Files a command changed (detected after it ran) do not replace the command in its row.
    const detected = eventToRow(
      {
        id: 4,
        tool: 'bash',
        ok: true,
        args: { command: 'echo hi > b.txt' },
        details: { files: [{ path: 'b.txt', status: 'written', detected: true }] }
      } as never,
      ['command']
    );
    expect(detected.summary).toBe('echo hi > b.txt');
    expect(detected.files.map(f => f.path)).toEqual(['b.txt']);
  });
});

describe('an Accept refused because the file changed', () => {
  it('says what the person can do, not what the agent should', () => {
    const text = decisionText({
      state: 'refused',
      text: 'accept_repair refused: a.py changed since preview c1 was made… Re-read a.py and redo the edit.',
      by: 'ui',
      reason: 'stale_candidate'
    });
    expect(text).toContain('changed since this preview was made');
    expect(text).toContain('run the edit again for a fresh preview');
    expect(text).not.toContain('Re-read');
  });

  it("says the agent's held change is the agent's to make again", () => {
    const text = decisionText({ state: 'refused', text: 'x', by: 'ui', reason: 'stale_proposal' });
    expect(text).toContain('changed since this proposal was made');
    expect(text).toContain('ask the agent to make it again');
  });
});

describe('the fresh anchors of an edit', () => {
  it('are the LINE:HH rows of each edited file, the regions apart', () => {
    const text = [
      'Edited a.py (+1 -1)',
      '1:16|def f():',
      '2:da|    x = 2',
      '…',
      '9:ee|    return x',
      'Edited b.py (+2 -0)',
      'note for the model',
      '4:c5|',
      "[… 12 more changed line(s) not shown; read path='b.py' start=5 to see them]"
    ].join('\n');
    expect(freshAnchors(text)).toEqual([
      { path: 'a.py', rows: ['1:16|def f():', '2:da|    x = 2', '…', '9:ee|    return x'] },
      { path: 'b.py', rows: ['4:c5|', '… 12 more changed line(s): read the file to see them'] }
    ]);
  });

  it('are none for a result without rows (a deleted file, an error)', () => {
    expect(freshAnchors('Edited a.py (+0 -3)\n(empty file)')).toEqual([]);
    expect(freshAnchors('edit rejected: stale anchor 2:ab')).toEqual([]);
  });
});
