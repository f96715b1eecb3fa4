/**
 * The inline renderer of `application/vnd.kli.edit+json`: the call's outcome and, per file,
 * its diff and (for a repair preview) Accept / Reject.
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Kernel } from '@jupyterlab/services';
import { PanelLayout, Widget } from '@lumino/widgets';
import { UiConnection, connectionFor } from '../connection';
import { bundleHead, freshAnchors, shownFiles } from '../model/diff';
import { decidedWord } from '../model/decision';
import { EDIT_MIME, IEditBundle } from '../protocol';
import { FileChangeView } from './fileview';

interface IHasSessionContext {
  sessionContext: {
    session?: { kernel?: Kernel.IKernelConnection | null } | null;
  };
}

function hasSessionContext(w: unknown): w is IHasSessionContext {
  return !!w && typeof w === 'object' && 'sessionContext' in w;
}

/**
 * The kernel of the notebook (or console) a widget sits in: the nearest ancestor with a
 * session context; else whatever `fallback` finds (e.g. the notebook tracker by DOM).
 */
export function kernelOf(
  widget: Widget,
  fallback?: (node: HTMLElement) => Kernel.IKernelConnection | null
): Kernel.IKernelConnection | null {
  for (let w: Widget | null = widget; w; w = w.parent) {
    if (hasSessionContext(w)) {
      return w.sessionContext.session?.kernel ?? null;
    }
  }
  return fallback ? fallback(widget.node) : null;
}

/**
 * The fresh anchors of a written edit, under its diffs: the result text (which holds them) is
 * not shown when the diffs say what happened, and the next edit needs them.
 */
function anchorsBlock(text: string): Widget | null {
  const blocks = freshAnchors(text);
  if (!blocks.length) {
    return null;
  }
  const node = document.createElement('details');
  node.open = true;
  const summary = document.createElement('summary');
  summary.textContent = 'Anchors for the next edit';
  summary.title = 'The LINE:HH anchors of the changed lines, as written: valid for the next edit';
  const pre = document.createElement('pre');
  pre.textContent = blocks
    .map(b => (blocks.length > 1 ? [b.path, ...b.rows] : b.rows).join('\n'))
    .join('\n\n');
  node.append(summary, pre);
  const widget = new Widget({ node });
  widget.addClass('kli-EditOutput-anchors');
  return widget;
}

export class EditOutputRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(
    private readonly _languages: IEditorLanguageRegistry | null,
    private readonly _fallback?: (node: HTMLElement) => Kernel.IKernelConnection | null
  ) {
    super();
    this.addClass('kli-EditOutput');
    this.layout = new PanelLayout();
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    // Saved notebooks may hold bundles from other versions: every field is checked.
    const bundle = (model.data[EDIT_MIME] ?? {}) as unknown as Partial<IEditBundle>;
    const layout = this.layout as PanelLayout;
    for (const w of [...layout.widgets]) {
      w.dispose();
    }
    const files = shownFiles(
      (Array.isArray(bundle.files) ? bundle.files : []).filter(f => f && typeof f === 'object')
    );
    const text = typeof bundle.text === 'string' ? bundle.text : '';
    const how = bundleHead(bundle.ok, text, files);
    const head = new Widget();
    head.addClass('kli-EditOutput-head');
    head.node.dataset.ok = String(how.outcome !== 'error');
    head.node.dataset.outcome = how.outcome;
    const tool = document.createElement('span');
    tool.className = 'kli-EditOutput-tool';
    tool.textContent = bundle.tool ?? 'kli';
    const outcome = document.createElement('span');
    outcome.className = 'kli-EditOutput-outcome';
    outcome.textContent = how.outcome;
    head.node.append(tool, outcome);
    layout.addWidget(head);
    if (how.showText) {
      const pre = new Widget({ node: document.createElement('pre') });
      pre.addClass('kli-EditOutput-text');
      pre.node.textContent = text;
      layout.addWidget(pre);
    }
    const lookup = (): UiConnection | null => {
      const kernel = kernelOf(this, this._fallback);
      return kernel ? connectionFor(kernel) : null;
    };
    const views = files.map(
      file => new FileChangeView(file, { languages: this._languages, lookup })
    );
    // A decided preview reads as decided: the head follows the decision of its previews.
    const follow = (): void => {
      const word = decidedWord(views.map(v => v.repair?.decision ?? null));
      if (word) {
        head.node.dataset.outcome = word;
        head.node.dataset.ok = String(word !== 'refused');
        outcome.textContent = word;
      }
    };
    for (const view of views) {
      view.repair?.decisionChanged.connect(follow);
      layout.addWidget(view);
    }
    if (!how.showText) {
      const anchors = anchorsBlock(text);
      if (anchors) {
        layout.addWidget(anchors);
      }
    }
    return Promise.resolve();
  }
}
