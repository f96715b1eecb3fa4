/**
 * Renders `application/vnd.kli.edit+json` outputs (a magic's edit / write result) inline.
 *
 * A plain plugin rather than a mime extension: the renderer needs the editor languages and
 * the notebook tracker, which mime extensions cannot ask for. Both are optional, so the
 * plugin also runs in Notebook 7 and wherever a notebook tracker is absent.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { Kernel } from '@jupyterlab/services';
import { EDIT_MIME } from '../protocol';
import { EditOutputRenderer } from '../widgets/editoutput';

/** Above JupyterLab's JSON and HTML renderers, so the extension wins over the fallbacks. */
const RANK = 10;

export const rendererPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kli-kernel:renderer',
  description: 'Renders kli edit results as diffs with Accept / Reject for repair previews.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [IEditorLanguageRegistry, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    languages: IEditorLanguageRegistry | null,
    notebooks: INotebookTracker | null
  ) => {
    const fallback = (node: HTMLElement): Kernel.IKernelConnection | null => {
      const panel = notebooks?.find(p => p.node.contains(node));
      return panel?.sessionContext.session?.kernel ?? null;
    };
    rendermime.addFactory(
      {
        safe: true,
        mimeTypes: [EDIT_MIME],
        defaultRank: RANK,
        createRenderer: () => new EditOutputRenderer(languages, fallback)
      },
      RANK
    );
  }
};
