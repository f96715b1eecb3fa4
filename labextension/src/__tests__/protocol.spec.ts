import { describe, expect, it } from 'vitest';
import { parseKernelMsg } from '../protocol';

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
