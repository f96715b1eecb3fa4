import type { JupyterFrontEndPlugin } from '@jupyterlab/application';
import { activityPlugin } from './plugins/activity';
import { cellDiffPlugin } from './plugins/celldiff';
import { connectPlugin } from './plugins/connect';
import { openModelPlugin } from './plugins/openmodel';
import { rendererPlugin } from './plugins/renderer';

const plugins: JupyterFrontEndPlugin<void>[] = [
  rendererPlugin,
  connectPlugin,
  activityPlugin,
  cellDiffPlugin,
  openModelPlugin
];

export default plugins;
