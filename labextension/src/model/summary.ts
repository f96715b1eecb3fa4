/**
 * EVENT → one row of the activity panel. Pure.
 */
import type { IFileChange, IToolEvent } from '../protocol';
import { fileCounts } from './diff';
import { sessionWho } from './timeline';

/** Longest one-line argument summary, in characters. */
export const SUMMARY_MAX = 80;

export interface IRowSummary {
  id: string;
  tool: string;
  summary: string;
  /** The summary is the files' paths: a narrow row elides it from the left (base.css). */
  summaryIsPaths: boolean;
  /** The files' full paths (a cell's id too), for a hover; empty when the summary is not. */
  summaryTitle: string;
  ok: boolean;
  okText: 'ok' | 'error';
  duration: string;
  session: string;
  sessionLabel: string;
  source: string;
  time: string;
  files: IFileChange[];
  /** "+3 -1" over all files, empty when the call changed no file. */
  counts: string;
  text: string;
}

/** Cut `s` to its last `max` characters, starting with an ellipsis when it was cut (paths:
 * the file name stays). */
export function clipStart(s: string, max: number = SUMMARY_MAX): string {
  return s.length <= max ? s : '…' + s.slice(s.length - Math.max(0, max - 1));
}

/** Cut `s` to `max` characters, ending with an ellipsis when it was cut. */
export function clip(s: string, max: number = SUMMARY_MAX): string {
  return s.length <= max ? s : s.slice(0, Math.max(0, max - 1)) + '…';
}

function firstLine(s: string): string {
  const trimmed = s.replace(/^\s*\n/, '');
  const nl = trimmed.indexOf('\n');
  return nl < 0 ? trimmed : trimmed.slice(0, nl) + ' …';
}

function show(v: unknown): string {
  if (typeof v === 'string') {
    return firstLine(v);
  }
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** An argument that names a file (`path`, `src_path`…): its summary keeps the file name. */
export function isPathArg(key: string | undefined): boolean {
  return !!key && (key === 'path' || key.endsWith('_path'));
}

/** The summary argument a row shows (the first of `keys` the call was given). */
function mainArg(args: Record<string, unknown> | undefined | null, keys: readonly string[]) {
  return args && typeof args === 'object'
    ? keys.find(k => args[k] !== undefined && args[k] !== null)
    : undefined;
}

/**
 * One line that says what a call was asked to do: the first of `keys` it was given (the tool's
 * `summary_args`, which the kernel sends in its hello), else `key=value` pairs.
 */
export function argSummary(
  args: Record<string, unknown> | undefined | null,
  keys: readonly string[] = []
): string {
  if (!args || typeof args !== 'object') {
    return '';
  }
  const main = mainArg(args, keys);
  if (main !== undefined) {
    const text = show(args[main]).trim();
    return isPathArg(main) ? clipStart(text) : clip(text);
  }
  const parts = Object.entries(args)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${show(v)}`);
  return clip(parts.join(' '));
}

/** "0.4 ms", "12 ms", "1.2 s", "2m 5s"; empty when unknown. */
export function formatDuration(ms: number | undefined | null): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    return '';
  }
  if (ms < 10) {
    return `${ms.toFixed(1)} ms`;
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 60000) {
    return `${(ms / 1000).toFixed(1)} s`;
  }
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${s % 60}s`;
}

/** HH:MM:SS of a Unix time in seconds, in local time; empty when unknown. */
export function formatTime(t: number | undefined | null): string {
  if (typeof t !== 'number' || !Number.isFinite(t)) {
    return '';
  }
  const d = new Date(t * 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** The files an event changed or previewed (details.files), keeping only well-formed ones. */
export function filesOf(event: Pick<IToolEvent, 'details'>): IFileChange[] {
  const files = event.details?.files;
  return Array.isArray(files)
    ? files.filter(f => f && typeof f === 'object' && typeof f.path === 'string')
    : [];
}

/** Characters of a cell's first line a label shows. */
export const CELL_LINE_MAX = 40;

/** A file's name as a person knows it, and the full path (with a cell's id) for a hover. A
 * notebook cell (`nb.ipynb#CELL_ID`) is named by its notebook, its position and its first
 * line ("nb.ipynb cell 3: import numpy as np"), never by its id. */
export function placeLabel(f: Pick<IFileChange, 'path' | 'before' | 'after' | 'cell_index'>): {
  text: string;
  title: string;
  isCell: boolean;
} {
  const at = f.path.indexOf('#');
  if (at < 0) {
    return { text: f.path, title: f.path, isCell: false };
  }
  const nb = f.path.slice(0, at);
  const index = typeof f.cell_index === 'number' ? ` ${f.cell_index}` : '';
  // The first line the person knows the cell by: its text now (before the change), else the
  // new cell's.
  const source = typeof f.before === 'string' && f.before.trim() ? f.before : (f.after ?? '');
  const line = (typeof source === 'string' ? source : '')
    .split('\n')
    .map(l => l.trim())
    .find(l => l);
  const text = `${nb} cell${index}` + (line ? `: ${clip(line, CELL_LINE_MAX)}` : '');
  return { text, title: `${f.path}${index ? ` (cell${index})` : ''}`, isCell: true };
}

/** The row of `event`; `summaryArgs` are its tool's (ToolInfo.summary_args). */
export function eventToRow(event: IToolEvent, summaryArgs: readonly string[] = []): IRowSummary {
  const files = filesOf(event);
  let added = 0;
  let removed = 0;
  for (const f of files) {
    const c = fileCounts(f);
    added += c.added;
    removed += c.removed;
  }
  const own = files.filter(f => !f.detected);
  const session = event.session ?? '';
  return {
    id: String(event.id),
    tool: String(event.tool ?? '?'),
    // A file-changing call is best told by the files it changed (a patch's text is not); a
    // command or code whose changes were detected after it ran is told by itself.
    summary: own.length
      ? own.some(f => f.path.includes('#'))
        ? clip(own.map(f => placeLabel(f).text).join(', '))
        : clipStart(own.map(f => f.path).join(', '))
      : argSummary(event.args, summaryArgs),
    summaryTitle: own.map(f => placeLabel(f).title).join(', '),
    // A cell's label ends with its first line: cut at the end, not from the left.
    summaryIsPaths:
      (own.length > 0 && !own.some(f => f.path.includes('#'))) ||
      (!own.length && isPathArg(mainArg(event.args, summaryArgs))),
    ok: !!event.ok,
    okText: event.ok ? 'ok' : 'error',
    duration: formatDuration(event.duration_ms),
    session,
    // Who: the person's own session is "you" (the Timeline's Undo: "you, from the kli panel").
    sessionLabel: sessionWho(event.session_label || session, event.source),
    source: event.source ?? '',
    time: formatTime(event.time),
    files,
    counts: files.length ? `+${added} -${removed}` : '',
    text: typeof event.text === 'string' ? event.text : ''
  };
}
