"""``python -m kli.kernel.mcp`` — the same as ``kli mcp``."""

import sys

from kli.kernel.mcp.cli import main

sys.exit(main())
