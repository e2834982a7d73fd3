"""Save intents: why a client says a memory is saved, named once.

A credential is trusted to claim some of them (`auth.api_keys[].trusted_save_intents`,
`auth.oidc.trusted_save_intents_by_kind`); a claim outside its list is held for a user's
review instead of being believed.
"""

from __future__ import annotations

from enum import StrEnum


class SaveIntentName(StrEnum):
    EXPLICIT_USER_REQUEST = "explicit_user_request"  # the user said to save, remember, store
    USER_CONFIRMED = "user_confirmed"  # the client asked and the user said yes
    CLIENT_AUTO_SAVE = "client_auto_save"  # the user turned on the client's auto-save


ALL = frozenset(SaveIntentName)
# The claims that say a person decided: what a model must not be able to assert on a
# person's behalf.
USER_ASSERTED = frozenset({SaveIntentName.EXPLICIT_USER_REQUEST, SaveIntentName.USER_CONFIRMED})
