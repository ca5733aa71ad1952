"""A few helpers to read the UI's HTML in tests (the standard library's parser)."""

from __future__ import annotations

from html.parser import HTMLParser


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, []))
        if tag not in ("input", "br", "img", "meta", "link", "circle", "line", "path"):
            self._open.append(len(self.elements) - 1)

    def handle_endtag(self, tag: str) -> None:
        if not any(self.elements[i][0] == tag for i in self._open):
            return  # a void or self-closed element
        while self._open:
            index = self._open.pop()
            if self.elements[index][0] == tag:
                break

    def handle_data(self, data: str) -> None:
        for index in self._open:
            self.elements[index][2].append(data)


def elements(html: str, tag: str, **attrs: str) -> list[tuple[dict[str, str], str]]:
    """(attributes, text) of every ``tag`` element whose attributes contain ``attrs``
    (``class_="x"`` matches one class among several)."""
    parser = _Collector()
    parser.feed(html)
    found = []
    for name, have, text in parser.elements:
        if name != tag:
            continue
        ok = True
        for key, want in attrs.items():
            key = key.rstrip("_")
            value = have.get(key)
            ok = (
                ok
                and value is not None
                and (want in value.split() if key == "class" else value == want)
            )
        if ok:
            found.append((have, "".join(text).strip()))
    return found


def links(html: str) -> dict[str, str]:
    """Link text -> href of the page's links (the last one wins for a repeated text)."""
    return {text: attrs["href"] for attrs, text in elements(html, "a") if "href" in attrs}
