"""Root test configuration; it runs before any test module is imported.

anthropic 2.x sends over `httpx2`. Aliasing `httpx` to `httpx2` here, before anything imports
httpx, makes respx (which patches `httpx`) intercept the SDK's requests as well as ours. respx's
pytest plugin is therefore disabled as an entry point (`-p no:respx` in addopts) and loaded below,
after the alias, so its `respx_mock` fixture patches the aliased module.
"""

import httpx2

httpx2.alias_httpx()

pytest_plugins = ["respx.plugin"]
