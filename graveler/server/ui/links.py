"""The UI's addresses, built in one place: the app's pages and templates use them, and so do
integrations that link into a running UI (a Dagster materialization, an Airflow DAG run).

Refs, paths and prefixes travel as query parameters, percent-encoded here, so any branch
name or object key (slashes, ``#``, ``&``, non-ASCII text) round-trips unchanged. Only the
repository name (``[a-z0-9-]``) is a path segment. Nothing here imports more than the
standard library.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

#: Where the Airflow plugin mounts the app inside Airflow's API server.
AIRFLOW_PREFIX = "/graveler"


class Links:
    """URLs of the UI's pages under ``base``: ``""`` for root-relative links, the path the
    app is mounted at (``/graveler``) or an absolute URL (``http://host:8765``)."""

    def __init__(self, base: str = "") -> None:
        self.base = base.rstrip("/")

    def _url(self, route: str, /, **query: str | int | None) -> str:
        params = {k: str(v) for k, v in query.items() if v not in (None, "")}
        tail = f"?{urlencode(params, quote_via=quote)}" if params else ""
        return f"{self.base}{route}{tail}"

    def _repo(self, repo: str, page: str = "") -> str:
        return f"/repos/{quote(repo, safe='')}{page}"

    def home(self) -> str:
        """The list of repositories."""
        return self._url("/")

    def static(self, name: str) -> str:
        return self._url(f"/static/{quote(name)}")

    def branches(self, repo: str, after: str | None = None, deleted: str | None = None) -> str:
        """A repository's branches (its front page), paged past the branch ``after``."""
        return self._url(self._repo(repo), after=after, deleted=deleted)

    def log(self, repo: str, ref: str, after: str | None = None) -> str:
        """The history of ``ref``; ``after`` is the commit ID a page starts at."""
        return self._url(self._repo(repo, "/log"), ref=ref, after=after)

    def commit(self, repo: str, commit_id: str, after: str | None = None) -> str:
        """One commit (any ref resolves to its commit); ``after`` pages its changes."""
        return self._url(self._repo(repo, f"/commits/{quote(commit_id, safe='')}"), after=after)

    def compare(
        self,
        repo: str,
        left: str,
        right: str,
        prefix: str = "",
        after: str = "",
        view: str = "",
        diff: str = "",
    ) -> str:
        """What ``right`` changed since it parted from ``left`` (under ``prefix``, past the
        path ``after``); ``diff="two-dot"``: the direct difference of the two;
        ``view="files"`` lists the files of tables (Delta Lake...) instead of their versions."""
        return self._url(
            self._repo(repo, "/compare"),
            left=left,
            right=right,
            prefix=prefix,
            after=after,
            view=view,
            diff=diff,
        )

    def compare_summary(
        self, repo: str, left: str, right: str, prefix: str = "", diff: str = ""
    ) -> str:
        """The counts of a comparison, by prefix (computed in slices, see the compare page)."""
        return self._url(
            self._repo(repo, "/compare/summary"),
            left=left,
            right=right,
            prefix=prefix,
            diff=diff,
        )

    def changes(self, repo: str, branch: str, prefix: str = "", after: str = "") -> str:
        """A branch's uncommitted changes."""
        return self._url(self._repo(repo, "/changes"), branch=branch, prefix=prefix, after=after)

    def tree(self, repo: str, ref: str, prefix: str = "", after: str = "") -> str:
        """The objects and common prefixes under ``prefix`` at ``ref``."""
        return self._url(self._repo(repo, "/tree"), ref=ref, prefix=prefix, after=after)

    def object(self, repo: str, ref: str, path: str) -> str:
        """One object at ``ref``: its metadata and a preview."""
        return self._url(self._repo(repo, "/object"), ref=ref, path=path)

    def preview(self, repo: str, ref: str, path: str) -> str:
        return self._url(self._repo(repo, "/object/preview"), ref=ref, path=path)

    def raw(self, repo: str, ref: str, path: str, download: bool = False) -> str:
        """The object's bytes (images inline, everything else as a download)."""
        return self._url(
            self._repo(repo, "/object/raw"), ref=ref, path=path, download=1 if download else None
        )

    def action(self, repo: str, name: str) -> str:
        """Where the form of write action ``name`` (merge, revert, delete-branch) posts."""
        return self._url(self._repo(repo, f"/actions/{quote(name)}"))

    def find_run(self, branch: str, metadata: dict[str, str]) -> str:
        """The page that finds a pipeline run: its branch if it still exists, else the
        commit whose metadata holds all of ``metadata`` (``key=value`` pairs)."""
        params = [("branch", branch), *(("meta", f"{k}={v}") for k, v in metadata.items())]
        return f"{self.base}/runs/find?{urlencode(params, quote_via=quote)}"
