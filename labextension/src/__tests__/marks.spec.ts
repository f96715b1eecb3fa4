import { describe, expect, it } from 'vitest';
import { codePointsToUtf16, mapMarks, markedLines } from '../model/marks';

describe('codePointsToUtf16', () => {
  it('is the identity for text without astral characters', () => {
    expect(codePointsToUtf16('(defun f ())', [0, 5, 12])).toEqual([0, 5, 12]);
  });

  it('counts an astral character as one code point but two UTF-16 units', () => {
    // "a😀b)": code points a=0 😀=1 b=2 )=3; UTF-16 a=0 😀=1,2 b=3 )=4
    expect(codePointsToUtf16('a😀b)', [2, 3, 4])).toEqual([3, 4, 5]);
  });

  it('maps offsets past the end to the end and negative ones to 0', () => {
    expect(codePointsToUtf16('abc', [-4, 99])).toEqual([0, 3]);
  });
});

describe('mapMarks', () => {
  it('sorts, swaps reversed ranges and keeps notes', () => {
    const ranges = mapMarks('(a (b c)', [
      { from: 8, to: 7, note: "inserted ')'" },
      { from: 1, to: 2 }
    ]);
    expect(ranges).toEqual([
      { from: 1, to: 2, note: '' },
      { from: 7, to: 8, note: "inserted ')'" }
    ]);
  });

  it('drops marks that are not pairs of finite numbers', () => {
    const bad = [{ from: 'x', to: 2 }, { from: 1 }, null, { from: NaN, to: 1 }];
    expect(mapMarks('abc', bad as never)).toEqual([]);
  });

  it('maps code point offsets after an emoji to the right characters', () => {
    const text = ';; 😀\n(f))';
    const [r] = mapMarks(text, [{ from: 8, to: 9, note: 'removed' }]);
    expect(text.slice(r.from, r.to)).toBe(')');
  });

  it('clips ranges that run past the text', () => {
    expect(mapMarks('ab', [{ from: 1, to: 50 }])).toEqual([{ from: 1, to: 2, note: '' }]);
  });
});

describe('markedLines', () => {
  it('lists each line a range touches once, a range ending at a newline excluded', () => {
    const text = 'one\ntwo\nthree\n';
    expect(
      markedLines(text, [
        { from: 5, to: 6, note: '' },
        { from: 0, to: 4, note: '' },
        { from: 8, to: 8, note: '' }
      ])
    ).toEqual([1, 2, 3]);
  });
});
