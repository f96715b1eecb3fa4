/**
 * FILE (details.files[i]) → what the diff view shows. Pure: the widgets render this model.
 */
import type { IFileChange } from '../protocol';
import { countChanges } from './linediff';
import { IRange, mapMarks } from './marks';

export type StatusKind = 'written' | 'preview' | 'rejected' | 'refused' | 'other';

/** Words for the repair reasons the kernel names (FILE.reason), when it gives no message. */
export const REASON_TEXT: Record<string, string> = {
  repair_outside_edit: 'the repair changed text outside the edited range',
  form_count_changed: 'the repair changed the number of top-level forms',
  original_unparsed: 'the file did not parse before the edit',
  unrepairable: 'the delimiters could not be repaired',
  policy_reject: "the repair policy is 'reject'",
  policy_preview: "a preview was asked for (repair='preview')",
  repaired_local_stable: 'the repair is local to the edit',
  balanced: 'the delimiters balance',
  approval_review: 'held for your review (approval mode)'
};

/** The reason code of an agent's call held for the person's review (approval mode). */
export const HELD_FOR_REVIEW = 'approval_review';

/**
 * The line above a held call's Accept / Reject, for the person: it waits for them, and what
 * Accept does (`accept`: "Accept runs it"). Not a repair preview's words: nothing failed.
 */
export function heldLead(accept: string): string {
  return `Held for your review: ${accept}.`;
}

/**
 * The line above a proposal's Accept / Reject: a held file change (`reason` approval_review)
 * says what Accept writes; a repair preview was not applied automatically, and says why.
 */
export function proposalLead(reason: string | null | undefined, why: string): string {
  if (reason === HELD_FOR_REVIEW) {
    return heldLead('Accept writes exactly this, Reject writes nothing');
  }
  return why ? `Not applied automatically: ${why}` : 'Not applied automatically.';
}

export interface IDiffModel {
  path: string;
  /** The editor language name (FILE.language) or 'text'. */
  language: string;
  added: number;
  removed: number;
  status: string;
  statusKind: StatusKind;
  /** The status line shown next to the path: "written", "preview", "rejected: why"… */
  statusText: string;
  /** Left side: the file on disk before (empty for a new file), exactly. */
  original: string;
  /** Right side: after the call, or the candidate of a preview, exactly. */
  modified: string;
  isNew: boolean;
  /** No texts to compare (too large, or none sent): show the counts only. */
  noDiff: boolean;
  noDiffReason: string;
  /** A pending repair preview: offers Accept / Reject. */
  candidate: string | null;
  /** Why the preview was not applied automatically (empty when not a preview). */
  reasonText: string;
  /** The line above its Accept / Reject (proposalLead; empty when not a preview). */
  lead: string;
  /** Repaired characters, UTF-16 ranges of `modified`. */
  marks: IRange[];
}

function count(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0;
}

/** The words for a reason code (unknown codes read as their words). */
export function reasonWords(reason: string | null | undefined): string {
  return reason ? (REASON_TEXT[reason] ?? String(reason).replace(/_/g, ' ')) : '';
}

/**
 * Why a preview was not applied, or why a change was rejected: the reason named, then the
 * kernel's message (what the repair did), each when present.
 */
export function reasonOf(file: Pick<IFileChange, 'message' | 'reason'>): string {
  const words = reasonWords(file.reason);
  const message = file.message ? String(file.message).trim() : '';
  if (words && message) {
    return `${words}. ${message.charAt(0).toUpperCase()}${message.slice(1)}`;
  }
  return words || message;
}

function statusKindOf(status: string): StatusKind {
  switch (status) {
    case 'written':
    case 'preview':
    case 'rejected':
      return status;
    default:
      return 'other';
  }
}

/**
 * A file's +added -removed: counted from its texts when both are there (the lines the diff
 * shows; a bundle saved by an older kernel may carry the range its patch replaced), else the
 * kernel's numbers. The one count of the header and the activity panel's rows.
 */
export function fileCounts(
  file: Pick<IFileChange, 'before' | 'after' | 'added' | 'removed' | 'too_large'>
): { added: number; removed: number } {
  if (!file.too_large && typeof file.before === 'string' && typeof file.after === 'string') {
    return countChanges(file.before, file.after);
  }
  return { added: count(file.added), removed: count(file.removed) };
}

/**
 * The files a result's card list shows: a file refused before anything was proposed (a stale
 * anchor, an unread file: no candidate text) has nothing to compare, and the result's text
 * already says why — a card would repeat the message and show "+0 -0".
 */
export function shownFiles<T extends IFileChange>(files: T[]): T[] {
  return files.filter(
    f => !(f.status === 'rejected' && typeof f.after !== 'string' && !f.too_large)
  );
}

export function fileToDiffModel(file: IFileChange): IDiffModel {
  const status = String(file.status ?? 'written');
  const before = typeof file.before === 'string' ? file.before : null;
  const after = typeof file.after === 'string' ? file.after : null;
  const tooLarge = !!file.too_large;
  const noDiff = tooLarge || (before === null && after === null);
  const reason = reasonOf(file);
  const isPreview = status === 'preview';
  let statusText = status;
  if (status === 'rejected' && reason) {
    statusText = `rejected: ${reason}`;
  } else if (isPreview) {
    statusText = 'preview (not written)';
  }
  // The texts exactly: the view does not draw the empty line after a final line break
  // (model/shown.ts says why it must stay in the text).
  const original = before ?? '';
  const modified = after ?? (status === 'deleted' ? '' : original);
  const counts = fileCounts(file);
  return {
    path: String(file.path ?? ''),
    language: file.language ? String(file.language) : 'text',
    added: counts.added,
    removed: counts.removed,
    status,
    statusKind: statusKindOf(status),
    statusText,
    original,
    modified,
    isNew: before === null && after !== null,
    noDiff,
    noDiffReason: tooLarge
      ? 'The file is too large to show its diff.'
      : noDiff
        ? 'No text to compare.'
        : '',
    candidate: isPreview && file.candidate ? String(file.candidate) : null,
    reasonText: isPreview ? reason : '',
    lead: isPreview ? proposalLead(file.reason, reason) : '',
    marks: isPreview || (file.marks?.length ?? 0) > 0 ? mapMarks(modified, file.marks) : []
  };
}

/** "+3 -1" */
export function countsText(model: Pick<IDiffModel, 'added' | 'removed'>): string {
  return `+${model.added} -${model.removed}`;
}

/** How a result's head reads: its outcome word and whether the result text is shown. */
export interface IBundleHead {
  /** 'ok', 'error', or 'preview' while every shown file is a pending preview. */
  outcome: 'ok' | 'error' | 'preview';
  /**
   * The result text carries what the cards do not (errors, warnings, the summary of a call
   * without files). A result of previews only is not shown: it is written for the agent (the
   * "Not written", the call that accepts), and the cards say the same for a person — the
   * reason next to Accept / Reject.
   */
  showText: boolean;
}

export function bundleHead(
  ok: boolean | undefined,
  text: string,
  files: IFileChange[]
): IBundleHead {
  const previews = files.length > 0 && files.every(f => f.status === 'preview' && !!f.candidate);
  if (previews) {
    return { outcome: 'preview', showText: false };
  }
  return {
    outcome: ok === false ? 'error' : 'ok',
    showText: !!text && (ok === false || !files.length)
  };
}

/** The fresh anchors an edit returned for one file: its path and its `LINE:HH|text` rows. */
export interface IAnchorBlock {
  path: string;
  rows: string[];
}

const EDITED = /^Edited (.+) \(\+\d+ -\d+\)$/;
const ANCHOR_ROW = /^\d+:[0-9a-f]{2}\|/;
const MORE_ROWS = /^\[… (\d+) more changed line\(s\) not shown/;

/**
 * The fresh anchors in an edit's result text ("Edited PATH (+a -r)" then `LINE:HH|text` rows
 * of the changed regions, "…" between regions), per file, so a person can make the next edit
 * without reading the file again. The agent's "read path=… to see them" becomes words.
 */
export function freshAnchors(text: string): IAnchorBlock[] {
  const blocks: IAnchorBlock[] = [];
  let block: IAnchorBlock | null = null;
  for (const line of text.split('\n')) {
    const head = EDITED.exec(line);
    if (head) {
      block = { path: head[1], rows: [] };
      blocks.push(block);
      continue;
    }
    if (!block) {
      continue;
    }
    const more = MORE_ROWS.exec(line);
    if (ANCHOR_ROW.test(line) || (line === '…' && block.rows.length)) {
      block.rows.push(line);
    } else if (more) {
      block.rows.push(`… ${more[1]} more changed line(s): read the file to see them`);
    }
  }
  return blocks.filter(b => b.rows.some(r => ANCHOR_ROW.test(r)));
}
