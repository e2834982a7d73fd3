"""An append of one turn to a BEAM session, alone, on one chat, lexical (`bench.beam` runs
the same measure after its chats are stored):

    python -m bench.append_run --chat 1 --appends 200
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from agentmem.client import connect
from bench import append_latency, beam, servers
from bench.common import echo_floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chat", type=int, default=1)
    parser.add_argument("--appends", type=int, default=append_latency.APPENDS)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    chat = beam.load([args.chat])[0]
    with tempfile.TemporaryDirectory(prefix="agentmem-append-") as tmp_name:
        tmp = Path(tmp_name)
        echo = echo_floor(tmp, n=500)
        token = f"append-{args.chat}"
        keys = [servers.key(token, token, servers.ALL_SCOPES)]
        with (
            servers.database(tmp, "append", args.postgres) as url,
            servers.agentmem(tmp, keys, extra_env=beam.LEXICAL_ENV, storage_url=url) as address,
        ):
            with connect(address, token) as client:
                id_of = beam.insert(client, chat, beam.INSERT_MESSAGES, beam.INSERT_CHARS)
            source_id, held = append_latency.last_source(id_of)
            turns = [m for _, batch in chat.batches for m in batch]
            lat = append_latency.append_latency(address, token, source_id, turns, args.appends)
    print(json.dumps({"echo_floor": echo, "append": lat}))
    print(append_latency.line(lat, echo["p50_ms"], "lexical", held))
    met, figure = append_latency.check(lat, echo["p50_ms"])
    print(("ok  " if met else "MISS") + " " + figure)


if __name__ == "__main__":
    main()
