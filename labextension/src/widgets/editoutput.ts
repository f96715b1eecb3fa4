/**
 * The inline renderer of `application/vnd.kli.edit+json`: the call's outcome and, per file,
 * its diff and (for a repair preview) Accept / Reject.
 */
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Kernel } from '@jupyterlab/services';
import { PanelLayout, Widget } from '@lumino/widgets';
import { UiConnection, connectionFor } from '../connection';
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
    const files = Array.isArray(bundle.files) ? bundle.files : [];
    const head = new Widget();
    head.addClass('kli-EditOutput-head');
    head.node.dataset.ok = String(bundle.ok !== false);
    const tool = document.createElement('span');
    tool.className = 'kli-EditOutput-tool';
    tool.textContent = bundle.tool ?? 'kli';
    const outcome = document.createElement('span');
    outcome.className = 'kli-EditOutput-outcome';
    outcome.textContent = bundle.ok === false ? 'error' : 'ok';
    head.node.append(tool, outcome);
    layout.addWidget(head);
    // The result text carries what the diff does not: errors, warnings, the model's summary.
    if (bundle.text && (bundle.ok === false || !files.length)) {
      const text = new Widget({ node: document.createElement('pre') });
      text.addClass('kli-EditOutput-text');
      text.node.textContent = bundle.text;
      layout.addWidget(text);
    }
    const lookup = (): UiConnection | null => {
      const kernel = kernelOf(this, this._fallback);
      return kernel ? connectionFor(kernel) : null;
    };
    for (const file of files) {
      if (file && typeof file === 'object') {
        layout.addWidget(new FileChangeView(file, { languages: this._languages, lookup }));
      }
    }
    return Promise.resolve();
  }
}
