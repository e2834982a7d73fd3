"""`agentmem app-server`: agentmem as a memory backend for hosts that speak Codex's
app-server protocol (JSON-RPC over stdio or WebSocket).

Like `agentmem mcp`, it is a client of the gateway with the caller's credential: it adds a
wire and names, never policy or state. Modules: `wire` (JSON-RPC shapes and limits),
`protojson` and `models` (the JSON shape and models of agentmem.v1 messages), `methods`
(the one table of methods and notifications), `session` and `handshake` (one connection),
`gateway` (the calls), `notifications` (events as notifications), `errors`, `stdio` and
`websocket` (transports), `schemas` and `typescript` (generated from the table), `cli`.
"""
