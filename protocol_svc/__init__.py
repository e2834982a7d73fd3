"""agentmem gateway: authentication, authorization, capability gating, validation and
notification fan-out in front of the memory runtime. It keeps no memory data."""
