"""The `agentmem` command: run the services, and call them."""
