"""The XML S3 speaks: responses built as text (fast, namespaced as S3's), requests parsed
with the standard library (no entities, no DTDs: ``defusedxml``-like limits enforced by
refusing any ``<!``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from xml.sax.saxutils import escape

from graveler.server.s3.errors import S3Error

NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
#: Request bodies larger than this are refused (a DeleteObjects of 1,000 long keys fits).
MAX_REQUEST_XML = 4 << 20


def document(root: str, children: Iterable[str]) -> bytes:
    """``<root xmlns=S3>children</root>`` with the XML declaration, as UTF-8."""
    inner = "".join(children)
    return (DECLARATION + f'<{root} xmlns="{NAMESPACE}">{inner}</{root}>').encode()


def element(name: str, value: object) -> str:
    """``<name>value</name>``, the value escaped (booleans as S3 writes them)."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    return f"<{name}>{escape(str(value))}</{name}>"


def group(name: str, fields: Mapping[str, object] | Iterable[str]) -> str:
    """``<name>`` around child elements (a mapping of name -> value) or ready-made text."""
    if isinstance(fields, Mapping):
        inner = "".join(element(k, v) for k, v in fields.items() if v is not None)
    else:
        inner = "".join(fields)
    return f"<{name}>{inner}</{name}>"


def error_document(code: str, message: str, resource: str, request_id: str, **extra: str) -> bytes:
    fields = {
        "Code": code,
        "Message": message,
        **extra,
        "Resource": resource,
        "RequestId": request_id,
    }
    return (DECLARATION + group("Error", fields)).encode()


def timestamp(when: datetime) -> str:
    """ISO 8601 with milliseconds, as S3's XML writes times."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def parse(body: bytes) -> ET.Element:
    """The root element of a request body, namespaces stripped from tags; MalformedXML when
    it is not well-formed (or declares entities or a DTD)."""
    if len(body) > MAX_REQUEST_XML:
        raise S3Error("MalformedXML", "the XML body is too large", 400)
    if b"<!" in body:
        raise S3Error("MalformedXML", "DTDs and entities are not accepted", 400)
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise S3Error(
            "MalformedXML", f"the XML you provided was not well-formed: {exc}", 400
        ) from None
    for node in root.iter():
        if "}" in node.tag:
            node.tag = node.tag.split("}", 1)[1]
    return root


def text_of(node: ET.Element, name: str, default: str | None = None) -> str | None:
    child = node.find(name)
    return child.text or "" if child is not None else default
