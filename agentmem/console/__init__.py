"""The web console: a person's view of their memory, through the public gateway only.

`agentmem console` serves server-rendered pages (Starlette + Jinja2, plain forms, a few
lines of script for live updates over Server-Sent Events). Every action is one public RPC
made with the signed-in person's own credential; the console holds no policy and no data.
"""


def missing() -> str:
    """Why the console cannot run in this installation ("" when it can)."""
    try:
        import agentmem.console.server  # noqa: F401  (its libraries: starlette, uvicorn, …)
    except ImportError as e:
        what = e.name or str(e)
        return (
            f"{what} cannot be imported: install the console's extra, agentmem-client[console] "
            "(from a checkout: pip install './client[console]')"
        )
    return ""
