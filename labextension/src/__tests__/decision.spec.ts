import { describe, expect, it } from 'vitest';
import {
  OPEN,
  buttonsEnabled,
  decisionText,
  fromReply,
  fromResolved,
  isFinal,
  matchPending,
  merge
} from '../model/decision';

describe('fromReply', () => {
  it('an ok accept is written, an ok reject is rejected', () => {
    expect(fromReply('accept', { op: 'result', id: 1, ok: true, text: 'Edited' }).state).toBe(
      'written'
    );
    expect(fromReply('reject', { op: 'result', id: 1, ok: true }).state).toBe('rejected');
  });

  it('a failed accept because the file changed is a refusal with the kernel text', () => {
    const d = fromReply('accept', {
      op: 'result',
      id: 2,
      ok: false,
      text: 'a.lisp changed since the preview; edit it again.',
      details: {
        error: 'stale_candidate',
        resolved: { candidate: 'c1', status: 'refused', reason: 'stale_candidate', by: 'ui' }
      }
    });
    expect(d.state).toBe('refused');
    expect(d.reason).toBe('stale_candidate');
    // The kernel's words are the agent's: the person is told what they can do.
    expect(decisionText(d)).toMatch(/^Refused: the file changed since this preview was made/);
  });

  it('a refusal is read from the code, not from words in the text', () => {
    // wrong_path: the candidate is still pending, though the text says "refused".
    const wrongPath = fromReply('accept', {
      op: 'result',
      id: 5,
      ok: false,
      text: 'accept_repair refused: candidate c1 is for a.lisp, not b.lisp.',
      details: { error: 'wrong_path' }
    });
    expect(wrongPath.state).toBe('failed');
    expect(buttonsEnabled(wrongPath)).toBe(true);
    // A refusal whose words match no pattern is still a refusal.
    const invalid = fromReply('accept', {
      op: 'result',
      id: 6,
      ok: false,
      text: 'candidate c1 for a.lisp no longer parses',
      details: {
        error: 'invalid_candidate',
        resolved: { candidate: 'c1', status: 'refused', reason: 'invalid_candidate', by: 'ui' }
      }
    });
    expect(invalid.state).toBe('refused');
  });

  it('a candidate the kernel does not know is no longer pending, and final', () => {
    const d = fromReply('accept', {
      op: 'result',
      id: 4,
      ok: false,
      text: 'unknown repair candidate c9',
      details: { error: 'unknown_candidate' }
    });
    expect(d.state).toBe('gone');
    expect(isFinal(d)).toBe(true);
    expect(buttonsEnabled(d)).toBe(false);
    expect(decisionText(d)).toBe('No longer pending: unknown repair candidate c9');
  });

  it('other failures leave the buttons usable', () => {
    const d = fromReply('accept', {
      op: 'error',
      id: 3,
      error: 'frontend',
      text: 'no kernel'
    });
    expect(d.state).toBe('failed');
    expect(buttonsEnabled(d)).toBe(true);
  });
});

describe('merge', () => {
  it('keeps a final decision against later guesses', () => {
    const written = fromResolved({
      op: 'resolved',
      candidate: 'c1',
      status: 'written'
    });
    expect(merge(written, { state: 'failed', text: 'x', by: 'ui' })).toBe(written);
  });

  it("lets the kernel's resolved replace a reply's guess", () => {
    const guess = { state: 'failed' as const, text: 'timeout', by: 'ui' };
    const resolved = fromResolved({
      op: 'resolved',
      candidate: 'c1',
      status: 'refused',
      text: 'changed',
      by: 'agent'
    });
    const d = merge(guess, resolved, true);
    expect(d.state).toBe('refused');
    expect(isFinal(d)).toBe(true);
    expect(buttonsEnabled(d)).toBe(false);
    expect(decisionText(d)).toBe('Refused (by agent): changed');
  });

  it('says a candidate was discarded when its session closed', () => {
    const d = fromResolved({
      op: 'resolved',
      candidate: 'c2',
      status: 'rejected',
      by: 'kernel',
      reason: 'discarded'
    });
    expect(d.state).toBe('rejected');
    expect(decisionText(d)).toBe('Discarded by the kernel: too many proposals were pending.');
  });

  it('a reject with a note shows the note the agent receives', () => {
    const d = fromResolved({
      op: 'resolved',
      candidate: 'p2',
      status: 'rejected',
      text: '',
      by: 'ui',
      reason: 'rejected',
      note: 'use the docs folder'
    });
    expect(decisionText(d)).toBe('Rejected. Note for the agent: use the docs folder');
  });

  it('names who resolved it when it was not this UI', () => {
    const d = fromResolved({ op: 'resolved', candidate: 'c3', status: 'written', by: 'magic' });
    expect(decisionText(d)).toBe('Written (by magic).');
    // A held command or code that an Accept ran wrote nothing itself.
    expect(decisionText(d, true)).toBe('Ran (by magic).');
  });

  it('starts open with both buttons enabled', () => {
    expect(buttonsEnabled(OPEN)).toBe(true);
    expect(decisionText(OPEN)).toBe('');
  });
});

describe('matchPending', () => {
  const pending = [
    {
      candidate: 'c1',
      path: 'a.py',
      file: { path: 'a.py', status: 'preview', after: 'x = (1)\n' }
    },
    { candidate: 'c2', path: 'b.py' }
  ];

  it('matches the same id, path and candidate text', () => {
    expect(matchPending(pending, { candidate: 'c1', path: 'a.py', after: 'x = (1)\n' })).toBe(
      'match'
    );
    expect(matchPending(pending, { candidate: 'c2', path: 'b.py', after: 'anything' })).toBe(
      'match'
    );
  });

  it('refuses an id reused by the kernel for another preview', () => {
    expect(matchPending(pending, { candidate: 'c1', path: 'other.py', after: null })).toBe(
      'mismatch'
    );
    expect(matchPending(pending, { candidate: 'c1', path: 'a.py', after: 'y = [2]\n' })).toBe(
      'mismatch'
    );
  });

  it('leaves an id the kernel does not list to the kernel', () => {
    expect(matchPending(pending, { candidate: 'c9', path: 'a.py', after: null })).toBe('unknown');
  });
});
