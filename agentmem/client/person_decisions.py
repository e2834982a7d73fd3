"""What only the person decides, and where they decide it.

Approving or rejecting a memory that waits for review, a thread's memory mode, a memory's
classification, a fact's retraction, revoking, erasing and the insert policy are the
person's decisions. An agent's credential is refused them (`MISSING_SCOPE`; for a review
also `APPROVAL_REQUIRES_PERSON` or `SELF_APPROVAL_DENIED`). The surfaces a model uses, the
MCP tools and the app-server's methods, say so in their descriptions and in the refusal the
model reads, with the console page and the CLI command where the person decides, so that
the model tells the user instead of trying again.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.client.errors import ApiError

# The refusals that mean "not an agent's to decide".
REFUSALS = frozenset({"MISSING_SCOPE", "APPROVAL_REQUIRES_PERSON", "SELF_APPROVAL_DENIED"})


@dataclass(frozen=True)
class Decision:
    what: str  # "approving a memory that waits for review"
    console: str  # where in the agentmem console ("" where it has no page for it)
    command: str  # the CLI command

    @property
    def where(self) -> str:
        command = f"with `{self.command}`"
        return f"in {self.console} or {command}" if self.console else command

    def described(self) -> str:
        """What a tool's description adds: whose decision it is, and where it is made."""
        return (
            " The person's decision, not an agent's: call it only when the user tells you "
            f"to. With an agent's credential it is refused; the user decides {self.where}."
        )

    def who(self) -> str:
        """Said after an agent's refusal: who decides, and where."""
        return (
            f"{self.what[0].upper()}{self.what[1:]} is the person's decision, not an agent's: "
            f"the user makes it {self.where}. Tell the user; do not try again."
        )

    def refused(self, error: ApiError, said: str | None = None) -> str:
        """The refusal the model reads: the catalog's words (`said`, else the error's
        explanation), then, for a refusal of an agent, who decides and where."""
        words = error.explain() if said is None else said
        return f"{words}. {self.who()}" if error.reason in REFUSALS else words


APPROVE = Decision(
    "approving a memory that waits for review",
    "the agentmem console's inbox",
    "agentmem memories review SOURCE_ID approve",
)
REJECT = Decision(
    "rejecting a memory that waits for review",
    "the agentmem console's inbox",
    "agentmem memories review SOURCE_ID reject",
)
THREAD_MODE = Decision(
    "setting a thread's memory mode",
    "the agentmem console's threads page",
    "agentmem thread-mode set THREAD_ID MODE --expected-revision N",
)
CLASSIFY = Decision(
    "making a memory cold or active",
    "the agentmem console's memories page",
    "agentmem sources classify SOURCE_ID cold --expected-revision N",
)
RETRACT = Decision(
    "retracting a fact",
    "the agentmem console's facts page",
    "agentmem facts retract FACT_ID",
)
REVOKE = Decision(
    "revoking a memory",
    "the agentmem console's memories page",
    "agentmem sources revoke SOURCE_ID",
)
ERASE = Decision(
    "erasing a memory",
    "the agentmem console's memories page",
    "agentmem sources erase SOURCE_ID --expected-revision N",
)
POLICY = Decision(
    "setting the insert policy",
    "",
    "agentmem policy set POLICY --expected-revision N",
)
