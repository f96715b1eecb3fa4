import { describe, expect, it } from 'vitest';
import { PANEL_TEXT, panelText, parseKernelMsg } from '../protocol';

describe('parseKernelMsg', () => {
  it('accepts the kernel messages of docs/protocol.md, with or without v', () => {
    expect(parseKernelMsg({ v: 1, op: 'hello', events: [], pending: [] })?.op).toBe('hello');
    expect(parseKernelMsg({ op: 'event', event: { id: 'e1', tool: 'read', ok: true } })?.op).toBe(
      'event'
    );
    expect(parseKernelMsg({ v: 1, op: 'resolved', candidate: 'c1', status: 'written' })?.op).toBe(
      'resolved'
    );
    expect(parseKernelMsg({ v: 1, op: 'result', id: 'ui1', ok: true })?.op).toBe('result');
    expect(parseKernelMsg({ v: 1, op: 'error', id: null, error: 'bad_request' })?.op).toBe('error');
  });

  it('ignores other versions, unknown ops and malformed data', () => {
    expect(parseKernelMsg({ v: 2, op: 'hello' })).toBeNull();
    expect(parseKernelMsg({ v: 1, op: 'dance' })).toBeNull();
    expect(parseKernelMsg({ v: 1, op: 'event' })).toBeNull();
    expect(parseKernelMsg({ v: 1, op: 'event', event: [] })).toBeNull();
    expect(parseKernelMsg({ v: 1, op: 'resolved', candidate: 4 })).toBeNull();
    expect(parseKernelMsg(null)).toBeNull();
    expect(parseKernelMsg('hello')).toBeNull();
    expect(parseKernelMsg([{ op: 'hello' }])).toBeNull();
  });
});

describe('panelText', () => {
  it("shows a person the kernel's words for the person, not the agent's", () => {
    const refused = {
      op: 'result' as const,
      id: 'ui3',
      ok: false,
      text: 'undo refused: a.txt changed since change ch-1. Look at it first; to put the old bytes back anyway, repeat with force=true',
      details: {
        error: 'changed',
        [PANEL_TEXT]:
          'undo refused: a.txt changed since change ch-1. Look at it first; to put the old bytes back anyway, press Undo anyway'
      }
    };
    expect(panelText(refused)).toContain('press Undo anyway');
    expect(panelText(refused)).not.toContain('force=true');
  });

  it("falls back to the text, or an error reply's code", () => {
    expect(panelText({ op: 'result', id: 1, ok: true, text: 'Undid ch-1.', details: {} })).toBe(
      'Undid ch-1.'
    );
    expect(panelText({ op: 'error', id: 1, error: 'bad_request', text: '' } as never)).toBe(
      'bad_request'
    );
  });
});
