/**
 * The activity panel in the right sidebar, following the current notebook's kernel.
 *
 * Every token but the application is optional, so the plugin also loads in Notebook 7 (whose
 * notebook page has a right area too) and does nothing harmful where there is no notebook.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';
import { isKliKernel } from '../connection';
import { ActivityPanel } from '../widgets/activity';
import { keepPanelWidth } from '../widgets/panelwidth';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M3 5h8v2H3zm0 6h5v2H3zm0 6h8v2H3z"/>
    <path d="M14 4l7 8-7 8-1.5-1.3L18.4 12l-5.9-6.7z"/>
  </g>
</svg>`;

export const activityIcon = new LabIcon({
  name: 'kli-kernel:activity',
  svgstr: ICON_SVG
});

/** Command that shows the panel (also in the command palette as "Show kli activity"). */
export const SHOW_COMMAND = 'kli-kernel:show-activity';

/** `JupyterFrontEnd.name` of Notebook 7's application. */
const NOTEBOOK_APP_NAME = 'Jupyter Notebook';

export const activityPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kli-kernel:activity',
  description: "The agent's activity: every tool call, pending repair previews, Accept / Reject.",
  autoStart: true,
  requires: [],
  optional: [INotebookTracker, IEditorLanguageRegistry, ILayoutRestorer, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker | null,
    languages: IEditorLanguageRegistry | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null
  ) => {
    const panel = new ActivityPanel(languages);
    panel.title.icon = activityIcon;
    app.shell.add(panel, 'right', { rank: 900 });
    keepPanelWidth(panel, 'kli-kernel:activity-width');
    restorer?.add(panel, panel.id);
    app.commands.addCommand(SHOW_COMMAND, {
      label: 'Show kli activity',
      caption: 'Show the kli activity panel: tool calls and pending repair previews',
      execute: () => app.shell.activateById(panel.id)
    });
    // Notebook 7 lists every side-panel widget in its palette itself ("Show <caption>", its
    // SidePanelPalette): a second entry of ours would show the same words twice.
    if (app.name !== NOTEBOOK_APP_NAME) {
      palette?.addItem({ command: SHOW_COMMAND, category: 'kli' });
    }

    let watched: NotebookPanel | null = null;
    const follow = (): void => {
      const nb = notebooks?.currentWidget ?? null;
      if (nb !== watched) {
        watched?.sessionContext.kernelChanged.disconnect(follow);
        watched = nb;
        nb?.sessionContext.kernelChanged.connect(follow);
      }
      const kernel = nb?.sessionContext.session?.kernel ?? null;
      if (!nb) {
        panel.setKernel(null, 'No notebook open.');
      } else if (!kernel) {
        panel.setKernel(null, `${nb.title.label}: no kernel.`);
      } else if (!isKliKernel(kernel)) {
        panel.setKernel(null, `${nb.title.label}: ${kernel.name} is not a kli kernel.`);
      } else {
        panel.setKernel(kernel, nb.title.label);
      }
    };
    notebooks?.currentChanged.connect(follow);
    follow();
  }
};
