"""What a Delta transaction read, recovered from its commit.

Delta's conflict checks compare what the losing transaction *read* (its partition
predicates and the files they matched) with what the winning one added and removed. A
writer keeps that in memory; a merge only has the log, so :func:`read_set` rebuilds it from
the commit:

* a blind append (``commitInfo.isBlindAppend``, or a delta-rs ``WRITE`` in ``Append`` mode
  that only adds files) read nothing;
* DELETE, UPDATE, MERGE, OPTIMIZE and overwrites read what their predicate
  (``operationParameters.predicate``) selects. Like delta-spark, only the conjuncts that
  compare a partition column with literals count (``part = 'a'``, ``part IN ('a', 'b')``;
  delta-spark writes ``(part#12 = a)``); data conjuncts select every partition;
* a dynamic partition overwrite read the partitions it wrote;
* anything else that is not a blind append read the whole table.

A predicate this module cannot read selects more, never less: a merge may then refuse what
Delta would have let through, never the other way round. One heuristic: in a delta-spark
MERGE condition a partition-column literal conjunct is taken as restricting the target
(delta-spark logs the condition without saying which side a column belongs to).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from graveler.tables.delta.actions import DeltaCommit

#: column -> the partition values it may hold (None: null)
PartitionFilter = tuple[tuple[str, frozenset[str | None]], ...]

_COLUMN = r"`?(?P<col>[A-Za-z_][\w.]*?)`?(?:#\d+L?)?"
_EQUALS = re.compile(rf"^{_COLUMN}\s*(?:=|==|<=>)\s*(?P<lit>.+)$", re.S)
_IN = re.compile(rf"^{_COLUMN}\s+IN\s*\((?P<items>.*)\)$", re.S | re.I)
_BARE = re.compile(r"^[\w\-:.+ ]+$")
_KEYWORD = re.compile(r"\s(?:OR|AND|NOT|IS|LIKE)\s", re.I)
_NULL = object()


@dataclass(frozen=True, slots=True)
class ReadSet:
    """What a transaction read: nothing (``blind``), every file (``whole``), or the files
    matching any of ``filters``."""

    blind: bool = False
    whole: bool = False
    filters: tuple[PartitionFilter, ...] = ()

    def matches(self, partition_values: Mapping[str, object] | None) -> bool:
        """Whether a file with these partition values is inside what was read."""
        if self.blind:
            return False
        if self.whole:
            return True
        values = partition_values or {}
        return any(_matches(f, values) for f in self.filters)


BLIND = ReadSet(blind=True)
WHOLE = ReadSet(whole=True)


def read_set(commit: DeltaCommit, partition_columns: Sequence[str]) -> ReadSet:
    """What the transaction that wrote ``commit`` read (see the module docstring)."""
    if is_blind_append(commit):
        return BLIND
    params = commit.parameters
    if _truthy(params.get("dynamicPartitionOverwrite")):
        adds = commit.of("add")
        return ReadSet(filters=tuple(_exact(a.get("partitionValues")) for a in adds))
    predicate = params.get("predicate")
    if not isinstance(predicate, str) or not partition_columns:
        return WHOLE
    conjuncts = [c for text in _predicate_texts(predicate) for c in split_and(text)]
    found = _partition_filter(conjuncts, {c.lower(): c for c in partition_columns})
    return ReadSet(filters=(found,)) if found else WHOLE


def is_blind_append(commit: DeltaCommit) -> bool:
    """Whether the commit's transaction read nothing: its ``isBlindAppend`` when the writer
    recorded it, else (delta-rs) a ``WRITE`` in ``Append`` mode with only ``add`` actions."""
    info = commit.commit_info
    if "isBlindAppend" in info:
        return info.get("isBlindAppend") is True
    params = commit.parameters
    return (
        commit.operation == "WRITE"
        and str(params.get("mode", "")).lower() == "append"
        and "predicate" not in params
        and commit.first("remove") is None
    )


def split_and(text: str) -> list[str]:
    """The top-level ``AND`` conjuncts of ``text``, outer parentheses removed."""
    text = _unwrap(text.strip())
    cuts: list[int] = []
    for i, _, depth in _outside_quotes(text):
        if depth == 0 and (not cuts or i >= cuts[-1] + 5) and text[i : i + 5].upper() == " AND ":
            cuts.append(i)
    if not cuts:
        return [text.strip()]
    starts = [0, *(cut + 5 for cut in cuts)]
    parts = [text[a:b] for a, b in zip(starts, [*cuts, len(text)], strict=True)]
    return [c for p in parts for c in split_and(p)]


def _unwrap(text: str) -> str:
    """``text`` without parentheses that enclose all of it."""
    while text.startswith("(") and text.endswith(")") and _closes_at_end(text):
        text = text[1:-1].strip()
    return text


def _closes_at_end(text: str) -> bool:
    """Whether the parenthesis opening ``text`` closes at its last character."""
    depth = 0
    for i, ch, depth in _outside_quotes(text):
        if ch == ")" and depth == 0 and i != len(text) - 1:
            return False
    return depth == 0


def _outside_quotes(text: str) -> Iterator[tuple[int, str, int]]:
    """Index, character and parenthesis depth (after it) of each character of ``text``
    outside quoted strings and identifiers (``'``, ``"``, backquotes)."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
            continue
        if ch in "'\"`":
            quote = ch
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        yield i, ch, depth


def _predicate_texts(predicate: str) -> list[str]:
    """delta-spark writes a JSON list of expressions; others a single SQL text."""
    stripped = predicate.strip()
    if stripped.startswith("["):
        try:
            found = json.loads(stripped)
        except ValueError:
            return [predicate]
        if isinstance(found, list):
            return [str(p) for p in found]
    return [predicate]


def _partition_filter(conjuncts: Iterable[str], columns: Mapping[str, str]) -> PartitionFilter:
    """The partition-column conjuncts that compare with literals, as allowed values."""
    allowed: dict[str, frozenset[str | None]] = {}
    for conjunct in conjuncts:
        parsed = _comparison(conjunct)
        if parsed is None:
            continue
        column = columns.get(parsed[0].rsplit(".", 1)[-1].lower())
        if column is None:
            continue
        values = parsed[1]
        allowed[column] = allowed[column] & values if column in allowed else values
    return tuple(sorted(allowed.items()))


def _comparison(conjunct: str) -> tuple[str, frozenset[str | None]] | None:
    """``(column, values)`` for ``column = literal`` or ``column IN (literals)``."""
    conjunct = _unwrap(conjunct)
    found = _IN.match(conjunct)
    if found:
        items = [_literal(i) for i in _split_commas(found["items"])]
        if any(i is _NULL for i in items):
            return None
        return found["col"], frozenset(i for i in items if isinstance(i, str) or i is None)
    found = _EQUALS.match(conjunct)
    if found is None:
        return None
    value = _literal(found["lit"])
    if value is _NULL:
        return None
    return found["col"], frozenset([value if isinstance(value, str) else None])


def _split_commas(text: str) -> list[str]:
    parts, quote, start = [], "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _literal(text: str) -> object:
    """A literal's text value (None for SQL NULL); ``_NULL`` when it is no literal."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        if text[0] in inner.replace(text[0] * 2, ""):
            return _NULL  # more than one literal ('a' OR x = 'b')
        return inner.replace(text[0] * 2, text[0])
    if text.upper() == "NULL":
        return None
    if "#" in text or not _BARE.match(text) or _KEYWORD.search(text):
        return _NULL
    return text


def _exact(values: object) -> PartitionFilter:
    if not isinstance(values, dict):
        return ()
    return tuple(sorted((str(k), frozenset([_text(v)])) for k, v in values.items()))


def _matches(filt: PartitionFilter, values: Mapping[str, object]) -> bool:
    for column, allowed in filt:
        value = _text(values.get(column))
        if value not in allowed and not any(_same_number(value, a) for a in allowed):
            return False
    return True


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None  # Delta writes a null partition value as "" or null
    return str(value)


def _same_number(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def _truthy(value: object) -> bool:
    return value is True or str(value).lower() == "true"
