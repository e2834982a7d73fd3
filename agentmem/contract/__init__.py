"""The contract, the ground floor: what a client and the servers agree on. The generated
public messages (`agentmem.v1`), the error catalog and its gRPC status mapping, field rules,
save intents, scopes, capability names, JSON Schema from the descriptors; and the process
rules every surface shares (refusing a taken address, private files, JSON log lines).
Imports only protobuf, gRPC and regex (Unicode character properties)."""
