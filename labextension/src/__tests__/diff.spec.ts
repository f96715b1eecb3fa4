import { describe, expect, it } from 'vitest';
import { countsText, fileToDiffModel, heldLead, proposalLead, reasonOf } from '../model/diff';
import type { IFileChange } from '../protocol';

const written: IFileChange = {
  path: 'pkg/a.py',
  status: 'written',
  language: 'python',
  added: 1,
  removed: 1,
  before: 'x = 1\n',
  after: 'x = 2\n',
  too_large: false,
  candidate: null,
  reason: null,
  message: null,
  marks: []
};

describe('fileToDiffModel', () => {
  it('shows a written file as before against after with its counts', () => {
    const m = fileToDiffModel(written);
    // The texts exactly (the view does not draw the line after a final line break).
    expect(m).toMatchObject({
      path: 'pkg/a.py',
      language: 'python',
      original: 'x = 1\n',
      modified: 'x = 2\n',
      statusKind: 'written',
      statusText: 'written',
      candidate: null,
      noDiff: false,
      isNew: false
    });
    expect(countsText(m)).toBe('+1 -1');
  });

  it('treats a null before as a new file diffed against nothing', () => {
    const m = fileToDiffModel({
      ...written,
      before: null,
      after: 'new\n',
      removed: 0
    });
    expect(m.isNew).toBe(true);
    expect(m.original).toBe('');
    expect(m.modified).toBe('new\n');
  });

  it('offers a preview with its candidate, reason and mapped marks', () => {
    const m = fileToDiffModel({
      ...written,
      path: 'a.lisp',
      language: 'commonlisp',
      status: 'preview',
      before: '(defun f ()\n',
      after: '(defun f ())\n',
      candidate: 'c4',
      reason: 'repair_outside_edit',
      message: null,
      marks: [{ from: 11, to: 12, note: "inserted ')'" }]
    });
    expect(m.candidate).toBe('c4');
    expect(m.statusKind).toBe('preview');
    expect(m.statusText).toBe('preview (not written)');
    expect(m.reasonText).toBe('the repair changed text outside the edited range');
    expect(m.lead).toBe(
      'Not applied automatically: the repair changed text outside the edited range'
    );
    expect(m.marks).toEqual([{ from: 11, to: 12, note: "inserted ')'" }]);
    expect(m.modified.slice(11, 12)).toBe(')');
  });

  it("names the reason, then adds the kernel's message", () => {
    expect(
      reasonOf({
        reason: 'policy_preview',
        message: "'(' was never closed; inserted ')'"
      })
    ).toBe("a preview was asked for (repair='preview'). '(' was never closed; inserted ')'");
    expect(reasonOf({ reason: 'some_new_reason', message: null })).toBe('some new reason');
    expect(reasonOf({ reason: null, message: 'only a message' })).toBe('only a message');
    expect(reasonOf({ reason: null, message: null })).toBe('');
  });

  it('states the reason of a rejection in its status', () => {
    const m = fileToDiffModel({
      ...written,
      status: 'rejected',
      reason: 'policy_reject',
      message: 'unbalanced'
    });
    expect(m.statusKind).toBe('rejected');
    expect(m.statusText).toBe("rejected: the repair policy is 'reject'. Unbalanced");
    expect(m.candidate).toBeNull();
  });

  it('gives no candidate to a preview without one, and none to a written file', () => {
    expect(
      fileToDiffModel({ ...written, status: 'preview', candidate: null }).candidate
    ).toBeNull();
    expect(fileToDiffModel({ ...written, candidate: 'c9' }).candidate).toBeNull();
  });

  it('shows only counts for a file too large to carry its texts', () => {
    const m = fileToDiffModel({
      ...written,
      before: null,
      after: null,
      too_large: true,
      added: 5000,
      removed: 20
    });
    expect(m.noDiff).toBe(true);
    expect(m.noDiffReason).toMatch(/too large/);
    expect(countsText(m)).toBe('+5000 -20');
  });

  it('diffs a deleted file against empty text', () => {
    const m = fileToDiffModel({ ...written, status: 'deleted', after: null });
    expect(m.modified).toBe('');
    expect(m.original).toBe('x = 1\n');
    expect(m.statusKind).toBe('other');
  });

  it('survives missing and mistyped counts', () => {
    const m = fileToDiffModel({
      path: 'a',
      status: 'written',
      added: -3
    } as IFileChange);
    expect(countsText(m)).toBe('+0 -0');
    expect(m.language).toBe('text');
    expect(m.noDiff).toBe(true);
  });
});

describe('proposalLead', () => {
  it('says a held call is held for the person, not that something failed to apply', () => {
    const held = fileToDiffModel({
      path: 'a.txt',
      status: 'preview',
      before: 'a\n',
      after: 'b\n',
      candidate: 'p2',
      reason: 'approval_review',
      message: null
    });
    expect(held.lead).toBe(
      'Held for your review: Accept writes exactly this, Reject writes nothing.'
    );
    expect(held.lead).not.toContain('Not applied automatically');
    expect(heldLead('Accept runs this cell')).toBe('Held for your review: Accept runs this cell.');
  });

  it('says why a repair preview was not applied automatically', () => {
    expect(proposalLead('policy_preview', "a preview was asked for (repair='preview')")).toBe(
      "Not applied automatically: a preview was asked for (repair='preview')"
    );
    expect(proposalLead(null, '')).toBe('Not applied automatically.');
  });

  it('has no lead for a written change', () => {
    expect(fileToDiffModel(written).lead).toBe('');
  });
});
