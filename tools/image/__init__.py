"""Tools that look at and change the live image: summary, inspect, trace, redefine (issue 15;
docs/live-image.md). Nothing here imports Jupyter: the host describes the image through the
Workspace's hooks (``namespace``, ``hidden_names``, ``modules``)."""

from kli.tools.core import participants as _participants
from kli.tools.image import record as _record

# The image takes part in every recorded change (undo puts it back with the files): the
# package registers its participant with core, which never imports it.
_participants.register(_record.PARTICIPANT)
