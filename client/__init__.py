"""kli.client — attach an agent to a kli kernel and call its tools.

    from kli import client
    with client.start() as k:                    # launch and own a kernel
        r = k.call("read", {"path": "a.py"})     # -> ToolResult
    k = client.connect(notebook="analysis.ipynb")  # that notebook's kernel (or a connection file)
    print(k.where)                               # which kernel, its notebook and working dir
    k = client.connect_server(url, token)        # through a Jupyter server's websocket
    r = await k.acall("read", {"path": "a.py"})  # from asyncio; threads may share k too

The implementation lives in ``kli.kernel.client``; this package is its public name.
"""

from kli.kernel.client import *  # noqa: F403
from kli.kernel.client import __all__ as __all__
