"""agentmem memory runtime: storage, policy, provenance, audit receipts and the event log."""
