import { describe, expect, it } from 'vitest';
import { fileToDiffModel } from '../model/diff';
import { countChanges } from '../model/linediff';
import { docOf, fileLines, shownChanges } from '../model/shown';

interface IShownCase {
  name: string;
  before: string;
  after: string;
  /** The line numbers drawn removed (old text) and added (new text), one pair per stretch. */
  shown: [number[], number[]][];
}

// Every place a diff can start or end: first and last line, with and without a final line
// break, CRLF, a final line break on one side only, an empty text on either side.
const CASES: IShownCase[] = [
  {
    name: 'append after the last line',
    before: 'line 1\n',
    after: 'line 1\nappended\n',
    shown: [[[], [2]]]
  },
  { name: 'append two lines', before: 'a\nb\n', after: 'a\nb\nc\nd\n', shown: [[[], [3, 4]]] },
  { name: 'append a blank line', before: 'a\n', after: 'a\n\n', shown: [[[], [2]]] },
  {
    name: 'append after a blank last line',
    before: 'a\n\n',
    after: 'a\n\nb\n',
    shown: [[[], [3]]]
  },
  {
    name: 'insert before the first line',
    before: 'a\nb\n',
    after: 'x\na\nb\n',
    shown: [[[], [1]]]
  },
  { name: 'delete the first line', before: 'a\nb\n', after: 'b\n', shown: [[[1], []]] },
  { name: 'delete the last line', before: 'a\nb\n', after: 'a\n', shown: [[[2], []]] },
  { name: 'change the first line', before: 'a\nb\n', after: 'x\nb\n', shown: [[[1], [1]]] },
  { name: 'change the last line', before: 'a\nb\n', after: 'a\nc\n', shown: [[[2], [2]]] },
  {
    name: 'change the last line, no final break',
    before: 'a\nb',
    after: 'a\nc',
    shown: [[[2], [2]]]
  },
  {
    name: 'first and last line changed',
    before: 'a\nm\nb\n',
    after: 'x\nm\ny\n',
    shown: [
      [[1], [1]],
      [[3], [3]]
    ]
  },
  // Without a final line break the last line changes when a line follows it: it gains one.
  {
    name: 'append, no final break',
    before: 'line 1',
    after: 'line 1\nappended',
    shown: [[[1], [1, 2]]]
  },
  { name: 'final break added', before: 'a\nb', after: 'a\nb\n', shown: [[[2], [2]]] },
  { name: 'final break removed', before: 'a\nb\n', after: 'a\nb', shown: [[[2], [2]]] },
  {
    name: 'delete the last line, final break removed',
    before: 'a\nb\n',
    after: 'a',
    shown: [[[1, 2], [1]]]
  },
  { name: 'CRLF append', before: 'a\r\nb\r\n', after: 'a\r\nb\r\nc\r\n', shown: [[[], [3]]] },
  {
    name: 'CRLF change the last line',
    before: 'a\r\nb\r\n',
    after: 'a\r\nx\r\n',
    shown: [[[2], [2]]]
  },
  { name: 'CRLF delete the last line', before: 'a\r\nb\r\n', after: 'a\r\n', shown: [[[2], []]] },
  {
    name: 'CRLF insert before the first line',
    before: 'a\r\n',
    after: 'x\r\na\r\n',
    shown: [[[], [1]]]
  },
  { name: 'CRLF to LF on one line', before: 'a\r\nb\r\n', after: 'a\r\nb\n', shown: [[[2], [2]]] },
  { name: 'new file', before: '', after: 'x\ny\n', shown: [[[], [1, 2]]] },
  { name: 'new file, no final break', before: '', after: 'x', shown: [[[], [1]]] },
  { name: 'emptied file', before: 'x\ny\n', after: '', shown: [[[1, 2], []]] },
  { name: 'emptied file, no final break', before: 'x', after: '', shown: [[[1], []]] },
  { name: 'no change', before: 'a\n', after: 'a\n', shown: [] }
];

describe('a diff draws exactly the lines that changed', () => {
  it.each(CASES.map(c => [c.name, c] as const))('%s', (_, c) => {
    // The texts the view is given, as the view diffs them.
    const m = fileToDiffModel({
      path: 'a.txt',
      status: 'written',
      before: c.before,
      after: c.after
    });
    const shown = shownChanges(m.original, m.modified).map(s => [s.removed, s.added]);
    expect(shown).toEqual(c.shown);
    // The header's counts are the lines drawn.
    const counts = countChanges(c.before, c.after);
    expect(counts).toEqual({
      added: c.shown.reduce((n, [, added]) => n + added.length, 0),
      removed: c.shown.reduce((n, [removed]) => n + removed.length, 0)
    });
  });

  it('keeps the texts exactly, final line breaks and CRLF included', () => {
    const m = fileToDiffModel({
      path: 'a.txt',
      status: 'written',
      before: 'a\r\n',
      after: 'a\r\nb\r\n'
    });
    expect([m.original, m.modified]).toEqual(['a\r\n', 'a\r\nb\r\n']);
  });

  it('does not count the empty line after a final line break as a line of the file', () => {
    expect(fileLines(docOf(''))).toBe(0);
    expect(fileLines(docOf('a'))).toBe(1);
    expect(fileLines(docOf('a\n'))).toBe(1);
    expect(fileLines(docOf('a\n\n'))).toBe(2);
    expect(fileLines(docOf('\n'))).toBe(1);
  });
});
