/**
 * The shapes the kli kernel sends and receives. Defined once, in Python
 * (kli.kernel.protocol); `protocol.gen.ts` is generated from that definition by
 * `python scripts/gen_docs.py` (docs/protocol.md is the prose). This module adds only what
 * the extension does with them: recognising a kernel message.
 *
 * Types only: nothing here touches the DOM or JupyterLab, so the models can be unit-tested.
 */
import { PANEL_TEXT, PROTOCOL_VERSION } from './protocol.gen';
import type {
  IApprovalMsg,
  IChangesMsg,
  IErrorMsg,
  IEventMsg,
  IExpiredMsg,
  IHelloMsg,
  IModelApplyMsg,
  IModelReadMsg,
  IProposedMsg,
  IResolvedMsg,
  IResultMsg,
  ISandboxMsg,
  KernelMsg
} from './protocol.gen';

export * from './protocol.gen';

/** Parse a comm message's data into a known kernel message, or null. */
export function parseKernelMsg(data: unknown): KernelMsg | null {
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return null;
  }
  const msg = data as { op?: unknown; v?: unknown };
  if (msg.v !== undefined && msg.v !== PROTOCOL_VERSION) {
    return null;
  }
  switch (msg.op) {
    case 'hello':
      return msg as IHelloMsg;
    case 'event':
      return isObject((msg as IEventMsg).event) ? (msg as IEventMsg) : null;
    case 'resolved':
      return typeof (msg as IResolvedMsg).candidate === 'string' ? (msg as IResolvedMsg) : null;
    case 'proposed':
      return isObject((msg as IProposedMsg).candidate) ? (msg as IProposedMsg) : null;
    case 'expired':
      return Array.isArray((msg as IExpiredMsg).candidates) ? (msg as IExpiredMsg) : null;
    case 'approval':
      return isObject((msg as IApprovalMsg).approval) ? (msg as IApprovalMsg) : null;
    case 'changes':
      return Array.isArray((msg as IChangesMsg).changes) ? (msg as IChangesMsg) : null;
    case 'sandbox':
      return isObject((msg as ISandboxMsg).box) ? (msg as ISandboxMsg) : null;
    case 'result':
      return msg as IResultMsg;
    case 'error':
      return msg as IErrorMsg;
    case 'model_read':
      return typeof (msg as IModelReadMsg).path === 'string' ? (msg as IModelReadMsg) : null;
    case 'model_apply':
      return Array.isArray((msg as IModelApplyMsg).notebooks) ? (msg as IModelApplyMsg) : null;
    default:
      return null;
  }
}

function isObject(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/**
 * What a person at the panel is shown of a reply: the kernel's words for the person
 * (`details[PANEL_TEXT]`) when it wrote some, else its text (an error's code when it has none).
 * A result's `text` is written for the agent that called the tool.
 */
export function panelText(reply: IResultMsg | IErrorMsg): string {
  const forPerson = reply.op === 'result' ? reply.details?.[PANEL_TEXT] : undefined;
  if (typeof forPerson === 'string' && forPerson) {
    return forPerson;
  }
  return reply.text || (reply.op === 'error' ? reply.error : '');
}
