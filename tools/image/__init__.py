"""Tools that look at and change the live image: summary, inspect, trace, redefine (issue 15;
docs/live-image.md). Nothing here imports Jupyter: the host describes the image through the
Workspace's hooks (``namespace``, ``hidden_names``, ``modules``)."""
