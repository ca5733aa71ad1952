"""Where things are kept, and the only code that talks to a backend library.

* :mod:`.refs` -- SQL refs and staging: repositories, branches, tags, commits, staged
  entries (SQLAlchemy for PostgreSQL, the standard library's sqlite3 for the embedded
  default), with their migrations;
* :mod:`.committed` -- commit trees: ranges and metaranges, apply, diff, merge, the tiered
  cache; :mod:`.sstable` -- the RocksDB block-based files they are written in;
* :mod:`.objectstore` -- the object-store port and its local, S3 and memory backends;
* :mod:`.objects` -- object bytes at unique physical addresses, hashed on the way;
  :mod:`.entry` -- what a key maps to, and its encoding; :mod:`.external` -- imported
  objects outside the namespace; :mod:`.etag_hash` -- the MD5 beside a write;
* :mod:`.namespaces` -- canonical storage namespaces and their one owner;
* :mod:`.database` -- graveler's tables in a database another system migrates.

Backend errors (SQLAlchemy, botocore, OSError) are translated here into graveler's error
tree. May import: :mod:`graveler.core`.
"""
