"""``graveler serve``: one ASGI server for every HTTP interface of graveler, sharing one
client, one credentials store and one configuration.

The server's common part, used by every interface:

* :mod:`.app` -- the one application: routes each request to exactly one interface;
* :mod:`.auth` -- turns a request's credentials (AWS signatures, bearer tokens, the UI's
  session cookie) into a :class:`~.auth.Principal` and says what it may do;
  :mod:`.sigv4` -- AWS Signature Version 4; :mod:`.credentials` -- access keys in the refs
  database, their secrets encrypted under the server's key;
* :mod:`.config` -- :class:`~.config.ServerConfig`; :mod:`.listen` -- binding the socket;
  :mod:`.run` -- uvicorn with N worker processes.

One subpackage per interface, none importing another:

* :mod:`.ui` -- the web UI (and its sign-in);
* :mod:`.s3` -- the S3 gateway;
* :mod:`.catalog` -- the Iceberg REST catalog at ``/iceberg/api``.

The server keeps no state of its own: refs, staging, uploads and keys live in the refs
database, bytes in the object store, so any number of workers or replicas serve the same
repositories. May import: every folder of :mod:`graveler` but :mod:`graveler.cli`.
"""
