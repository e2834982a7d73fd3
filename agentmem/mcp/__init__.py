"""`agentmem mcp`: memory tools for MCP clients, each a thin call of one public RPC.

`command` adds the command to `agentmem`; `server` builds the MCP server (the SDK is the
client's `mcp` extra); `tools` and `session_tools` are the tools, `toolbox` what each uses,
`arguments` what they take, `confirm` asking the user before a memory is saved, `values` and
`schemas` what they return, `http` the streamable HTTP transport.
"""
