import { describe, expect, it } from 'vitest';
import {
  SUMMARY_MAX,
  argSummary,
  clip,
  eventToRow,
  formatDuration,
  placeLabel
} from '../model/summary';
import type { IToolEvent } from '../protocol';

describe('argSummary', () => {
  it("prefers the tool's summary arguments in the order the kernel sent them", () => {
    expect(argSummary({ limit: 10, path: 'src/a.py' }, ['path'])).toBe('src/a.py');
    expect(argSummary({ command: 'ls -la', timeout: 5 }, ['command'])).toBe('ls -la');
    expect(argSummary({ pattern: 'x', path: 'src' }, ['path', 'pattern'])).toBe('src');
    expect(argSummary({ pattern: 'x' }, ['path', 'pattern'])).toBe('x');
  });

  it('keeps no list of its own: without summary arguments it shows key=value pairs', () => {
    expect(argSummary({ path: 'src/a.py' })).toBe('path=src/a.py');
  });

  it('shows the first line of a multi-line patch, marking that more follows', () => {
    expect(argSummary({ input: '@@ a.py\n12#ab:x = 1\n' }, ['path', 'input'])).toBe('@@ a.py …');
  });

  it('falls back to key=value pairs for other arguments', () => {
    expect(argSummary({ a: 1, b: 'two', c: null })).toBe('a=1 b=two');
  });

  it('is one line no longer than SUMMARY_MAX', () => {
    const s = argSummary({ code: 'x'.repeat(500) }, ['code']);
    expect(s.length).toBe(SUMMARY_MAX);
    expect(s.endsWith('…')).toBe(true);
    expect(s).not.toContain('\n');
  });

  it('is empty without arguments', () => {
    expect(argSummary(undefined)).toBe('');
    expect(argSummary({})).toBe('');
  });
});

describe('clip', () => {
  it('keeps short text and cuts long text to the limit', () => {
    expect(clip('abc', 5)).toBe('abc');
    expect(clip('abcdef', 5)).toBe('abcd…');
  });
});

describe('formatDuration', () => {
  it.each([
    [0.42, '0.4 ms'],
    [12.4, '12 ms'],
    [1234, '1.2 s'],
    [125000, '2m 5s'],
    [undefined, ''],
    [-1, '']
  ])('%s ms → %s', (ms, text) => {
    expect(formatDuration(ms as number)).toBe(text);
  });
});

describe('eventToRow', () => {
  const event: IToolEvent = {
    kind: 'call',
    id: 'e17',
    time: 1764460000.5,
    tool: 'edit',
    args: { input: '@@ a.py\n...' },
    session: 's3',
    session_label: 'my agent',
    source: 'agent',
    ok: true,
    text: 'Edited a.py (+1 -1)',
    details: {
      files: [
        { path: 'a.py', status: 'written', added: 1, removed: 1 },
        { path: 'b.py', status: 'written', added: 2, removed: 0 }
      ]
    },
    duration_ms: 3.2
  };

  it('summarises an agent edit', () => {
    expect(eventToRow(event)).toMatchObject({
      id: 'e17',
      tool: 'edit',
      summary: 'a.py, b.py',
      ok: true,
      okText: 'ok',
      duration: '3.2 ms',
      session: 's3',
      sessionLabel: 'my agent',
      source: 'agent',
      counts: '+3 -1',
      text: 'Edited a.py (+1 -1)'
    });
  });

  it("names the person's own calls as theirs: the panel's Undo is not 'magic'", () => {
    const undo = { ...event, tool: 'undo', session_label: 'magic' };
    expect(eventToRow({ ...undo, source: 'ui' }).sessionLabel).toBe('you, from the kli panel');
    expect(eventToRow({ ...undo, source: 'magic' }).sessionLabel).toBe('you');
  });

  it('marks a failed call as an error and falls back to the session id', () => {
    const row = eventToRow(
      {
        ...event,
        ok: false,
        session_label: undefined,
        details: {}
      },
      ['path', 'input']
    );
    expect(row.okText).toBe('error');
    expect(row.sessionLabel).toBe('s3');
    expect(row.counts).toBe('');
    expect(row.files).toEqual([]);
    expect(row.summary).toBe('@@ a.py …');
  });

  it('ignores malformed files', () => {
    const row = eventToRow({
      ...event,
      details: {
        files: [null, { status: 'written' }, { path: 'ok.py', status: 'written' }]
      }
    } as never);
    expect(row.files.map(f => f.path)).toEqual(['ok.py']);
  });
});

describe('placeLabel', () => {
  const id = '2b3ee1cc-c15a-4f2e-9d1a-7a0c4d5e6f70';

  it('names a cell by its notebook, its position and the first line it has now; the id is for the hover', () => {
    const label = placeLabel({
      path: `work/Untitled.ipynb#${id}`,
      before: '\nimport numpy as np\nx = 1',
      after: 'import pandas as pd\nx = 2',
      cell_index: 3
    });
    expect(label.text).toBe('work/Untitled.ipynb cell 3: import numpy as np');
    expect(label.text).not.toContain(id);
    expect(label.title).toBe(`work/Untitled.ipynb#${id} (cell 3)`);
    expect(label.isCell).toBe(true);
  });

  it('a deleted cell is named by the first line it had; a long line is cut at its end', () => {
    expect(
      placeLabel({ path: `nb.ipynb#${id}`, before: '# Notes', after: null, cell_index: 1 }).text
    ).toBe('nb.ipynb cell 1: # Notes');
    expect(
      placeLabel({ path: `nb.ipynb#${id}`, before: null, after: 'new = 1', cell_index: 4 }).text
    ).toBe('nb.ipynb cell 4: new = 1');
    const long = 'y = ' + 'a'.repeat(80);
    expect(placeLabel({ path: `nb.ipynb#${id}`, after: long, cell_index: 2 }).text).toBe(
      `nb.ipynb cell 2: ${clip(long, 40)}`
    );
  });

  it('a file is its path', () => {
    expect(placeLabel({ path: 'src/a.py' })).toEqual({
      text: 'src/a.py',
      title: 'src/a.py',
      isCell: false
    });
  });

  it("a cell's row summary keeps the notebook's name (not cut from the left)", () => {
    const row = eventToRow({
      kind: 'call',
      id: 'e1',
      tool: 'edit',
      ok: true,
      details: {
        files: [
          {
            path: `a-folder-with-a-long-name/and-another/Untitled.ipynb#${id}`,
            status: 'written',
            before: 'a = 1',
            after: 'a = 2',
            cell_index: 2
          }
        ]
      }
    });
    expect(row.summary).toBe('a-folder-with-a-long-name/and-another/Untitled.ipynb cell 2: a = 1');
    expect(row.summaryIsPaths).toBe(false);
    expect(row.summaryTitle).toContain(id);
  });
});
