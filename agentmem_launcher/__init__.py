"""The launcher: `agentmem up | gateway | runtime`. It starts the services by module name
(`python -m runtime_svc`, `python -m protocol_svc`) and supervises them; it never imports
them. The `agentmem` command finds these commands through the `agentmem.commands` entry
point this distribution declares."""

from agentmem_launcher.commands import add_parsers

__all__ = ["add_parsers"]
