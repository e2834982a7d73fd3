"""`python -m protocol_svc`: the gateway process (also `agentmem gateway`)."""

import sys

from agentmem.cli.main import main

if __name__ == "__main__":
    main(["gateway", *sys.argv[1:]])
