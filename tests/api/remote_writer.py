"""A writer in another process, for the cross-process read tests (``test_read_views.py``).

``python -m tests.api.remote_writer DATABASE_URL HOME`` opens repository ``lake`` and runs
one JSON command per stdin line (``["put", branch, path, text]``, ``["delete", branch, path]``,
``["commit", branch]``, ``["reset", branch]``, ``["branch", name, source]``,
``["drop", name]``), answering ``ok`` on stdout once the command returned.
"""

from __future__ import annotations

import json
import sys

from graveler.client import Graveler


def main(url: str, home: str) -> None:
    with Graveler(home=home, database_url=url) as gv:
        repo = gv.repository("lake")
        print("ready", flush=True)
        for line in sys.stdin:
            op, *args = json.loads(line)
            if op == "put":
                repo.put(args[0], args[1], args[2].encode())
            elif op == "delete":
                repo.delete(args[0], args[1])
            elif op == "commit":
                repo.commit(args[0], "from another process")
            elif op == "reset":
                repo.reset(args[0])
            elif op == "branch":
                repo.create_branch(args[0], args[1])
            elif op == "drop":
                repo.delete_branch(args[0])
            print("ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
