"""The sample data of a repository created with ``sample_data`` (lakeFS's
``include_samples``): the paths lakeFS's sample has, with content made here.

* ``README.md``: what the sample is and how to try branches on it;
* ``lakes.parquet``: a Parquet table of lakes (about 1 MB), made of invented lakes with
  plausible measurements, the same on every run (a fixed seed);
* ``data/lakes.source.md``: how that table was made;
* ``images/``: 29 small pictures (28 PNG, 1 GIF) of a lake under changing skies.

Everything is built once per process, in memory, by the code below (no files are shipped).
The sample is committed on the default branch as one commit, ``Add sample data``.
"""

from __future__ import annotations

import functools
import io
import math
import random
import struct
import zlib

from graveler.repository import Repository

COMMIT_MESSAGE = "Add sample data"
ROWS = 18_000
SEED = 20261206
#: The image names of lakeFS's sample (28 PNG pictures and one GIF).
IMAGES = (
    "commit-change-02.png",
    "commit-change.png",
    "create-lakefs-branch.png",
    "duckdb-editor-02.png",
    "duckdb-editor-03.png",
    "duckdb-editor-04.png",
    "duckdb-editor-05.png",
    "duckdb-editor-06.png",
    "duckdb-main-01.png",
    "duckdb-main-02.png",
    "duckdb-main-03.png",
    "hooks-00.png",
    "hooks-01.png",
    "hooks-02.png",
    "hooks-03.png",
    "hooks-04.png",
    "hooks-05.png",
    "hooks-06.png",
    "hooks-07.png",
    "hooks-08.png",
    "merge01.png",
    "merge02.png",
    "quickstart-step-01-query.png",
    "quickstart-step-02-branch.png",
    "quickstart-step-03-merge.png",
    "quickstart-step-04-rollback.png",
    "quickstart-step-05-actions.png",
    "repo-contents.png",
    "waving-axolotl-transparent-w90.gif",
)
WIDTH, HEIGHT = 96, 54

README = """# A sample repository

This repository was created with sample data by graveler's lakeFS-compatible API.

* `lakes.parquet`: a table of {rows:,} lakes (name, country, area, depth, elevation,
  position, kind). The lakes are invented; see `data/lakes.source.md`.
* `images/`: small pictures of a lake under changing skies.

Try it: create a branch, change the table there, look at the difference, merge it back.

```sh
lakectl branch create lakefs://REPO/denmark-lakes --source lakefs://REPO/main
lakectl diff lakefs://REPO/main lakefs://REPO/denmark-lakes
```

`main` is protected: it takes merges only.
"""

SOURCE = """# Where `lakes.parquet` comes from

Nowhere: every lake in it is invented. graveler builds the table when a repository asks for
sample data, from a random generator with a fixed seed ({seed}), so every sample is the
same. Names are made of syllables, countries and continents are drawn from a short list,
and the measurements follow simple rules (deep lakes tend to be large, high lakes small),
so that queries give answers that look like something.

Columns: `id`, `name`, `country`, `continent`, `area_km2`, `max_depth_m`, `volume_km3`,
`elevation_m`, `latitude`, `longitude`, `type`, `frozen_months`.
"""

_SYLLABLES = [
    "la",
    "ke",
    "mo",
    "ri",
    "sa",
    "ta",
    "ven",
    "lu",
    "na",
    "or",
    "ba",
    "el",
    "mi",
    "to",
    "ka",
    "ru",
    "sel",
    "an",
    "dor",
    "vik",
    "ne",
    "ha",
    "pa",
    "lin",
    "ost",
    "ar",
]
_PLACES = (
    ("Denmark", "Europe"),
    ("Finland", "Europe"),
    ("Norway", "Europe"),
    ("Switzerland", "Europe"),
    ("Canada", "North America"),
    ("United States", "North America"),
    ("Chile", "South America"),
    ("Peru", "South America"),
    ("Kenya", "Africa"),
    ("Malawi", "Africa"),
    ("Mongolia", "Asia"),
    ("Japan", "Asia"),
    ("New Zealand", "Oceania"),
    ("Australia", "Oceania"),
)
_KINDS = ("glacial", "tectonic", "volcanic", "oxbow", "reservoir", "crater", "lagoon")


def populate(repo: Repository, committer: str) -> None:
    """Upload the sample to the default branch and commit it."""
    branch = repo.info.default_branch
    repo.upload_many(branch, files())
    repo.commit(branch, COMMIT_MESSAGE, committer=committer)


def files() -> list[tuple[str, bytes]]:
    """Every file of the sample, as (path, bytes)."""
    out = [
        ("README.md", README.format(rows=ROWS).encode()),
        ("data/lakes.source.md", SOURCE.format(seed=SEED).encode()),
        ("lakes.parquet", lakes_parquet()),
    ]
    out += [(f"images/{name}", image(i, name)) for i, name in enumerate(IMAGES)]
    return out


@functools.lru_cache(maxsize=1)
def lakes_parquet() -> bytes:
    """The table of lakes as Parquet (built once per process)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pydict(_lakes(random.Random(SEED)))
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="snappy")
    return sink.getvalue()


def _lakes(rng: random.Random) -> dict[str, list[object]]:
    """The table's columns."""
    names = [
        "id",
        "name",
        "country",
        "continent",
        "area_km2",
        "max_depth_m",
        "volume_km3",
        "elevation_m",
        "latitude",
        "longitude",
        "type",
        "frozen_months",
    ]
    columns: dict[str, list[object]] = {n: [] for n in names}
    for i in range(ROWS):
        country, continent = _PLACES[int(rng.random() * len(_PLACES))]
        area = round(math.exp(rng.random() * 12.0 - 2.5), 3)
        depth = round(min(1600.0, 2.0 + area**0.45 * (0.5 + 5.5 * rng.random())), 1)
        elevation = round(max(-400.0, 2400.0 * rng.random() - 300.0 - area**0.3), 1)
        row = (
            i + 1,
            _name(rng),
            country,
            continent,
            area,
            depth,
            round(area * depth * (0.2 + 0.3 * rng.random()) / 1000.0, 4),
            elevation,
            round(rng.random() * 125.0 - 55.0, 5),
            round(rng.random() * 360.0 - 180.0, 5),
            _KINDS[int(rng.random() * len(_KINDS))],
            max(0, min(12, int(elevation / 400.0 + 4.0 * rng.random() - 2.0))),
        )
        for name, value in zip(names, row, strict=True):
            columns[name].append(value)
    return columns


def _name(rng: random.Random) -> str:
    count = 2 + int(rng.random() * 3)
    word = "".join(_SYLLABLES[int(rng.random() * len(_SYLLABLES))] for _ in range(count))
    return "Lake " + word.capitalize()


# --- pictures ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=len(IMAGES))
def image(index: int, name: str) -> bytes:
    """Picture ``index``: a lake under a sky whose colour turns with the index."""
    pixels = _scene(index)
    return _gif(pixels) if name.endswith(".gif") else _png(pixels)


Pixel = tuple[int, int, int]


def _scene(index: int) -> list[list[Pixel]]:
    hue = index / len(IMAGES)
    sky = (int(90 + 120 * hue), int(150 + 60 * math.sin(hue * 3.1)), 230)
    water = (20, int(70 + 60 * hue), int(120 + 80 * (1 - hue)))
    shore = HEIGHT * 0.55
    rows = []
    for y in range(HEIGHT):
        row: list[Pixel] = []
        for x in range(WIDTH):
            ridge = HEIGHT * (0.35 + 0.12 * math.sin(x / 9.0 + index))
            if y > shore:
                row.append(_scaled(water, 1.0 - 0.4 * (y - shore) / HEIGHT, 0))
            elif y > ridge:
                row.append((60 + index * 2, 90, 60))
            else:
                row.append(_scaled(sky, 1.0, int(40 * y / HEIGHT)))
        rows.append(row)
    return rows


def _scaled(colour: Pixel, factor: float, lift: int) -> Pixel:
    r, g, b = (min(255, int(c * factor) + lift) for c in colour)
    return r, g, b


def _png(pixels: list[list[Pixel]]) -> bytes:
    raw = b"".join(b"\x00" + bytes(c for p in row for c in p) for row in pixels)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def _gif(pixels: list[list[Pixel]]) -> bytes:
    """A GIF89a of the picture (colours reduced to 256, LZW codes kept at 9 bits by a clear
    code before the table would grow past them)."""
    palette: dict[Pixel, int] = {}
    indices = []
    for row in pixels:
        for p in row:
            q = (p[0] & 0xE0, p[1] & 0xE0, p[2] & 0xC0)
            indices.append(palette.setdefault(q, len(palette)))
    colours = list(palette) + [(0, 0, 0)] * (256 - len(palette))
    table = b"".join(bytes(c) for c in colours)
    screen = struct.pack("<6sHHBBB", b"GIF89a", WIDTH, HEIGHT, 0xF7, 0, 0)
    descriptor = b"\x2c" + struct.pack("<HHHHB", 0, 0, WIDTH, HEIGHT, 0)
    data = _lzw(indices)
    blocks = b"".join(
        bytes([len(data[i : i + 255])]) + data[i : i + 255] for i in range(0, len(data), 255)
    )
    return screen + table + descriptor + b"\x08" + blocks + b"\x00\x3b"


def _lzw(indices: list[int]) -> bytes:
    clear, end = 256, 257
    codes = []
    for i, value in enumerate(indices):
        if i % 254 == 0:
            codes.append(clear)
        codes.append(value)
    codes.append(end)
    bits = 0
    count = 0
    out = bytearray()
    for code in codes:
        bits |= code << count
        count += 9
        while count >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            count -= 8
    if count:
        out.append(bits & 0xFF)
    return bytes(out)
