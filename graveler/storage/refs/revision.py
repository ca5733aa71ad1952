"""The schema revision this build of graveler reads and writes (no imports, so light readers
such as :mod:`graveler.storage.refs.lite` can check it without loading SQLAlchemy or Alembic)."""

#: The newest migration shipped with this build (checked against the scripts by a test). When a
#: database already records it, opening the store skips importing Alembic altogether (~0.3 s).
HEAD_REVISION = "0004"
