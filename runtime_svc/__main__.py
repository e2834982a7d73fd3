"""`python -m runtime_svc`: the memory runtime process (also `agentmem runtime`)."""

import sys

from agentmem.cli.main import main

if __name__ == "__main__":
    main(["runtime", *sys.argv[1:]])
