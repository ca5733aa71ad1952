"""``graveler serve``: one ASGI server for every HTTP interface of graveler.

* :mod:`graveler.server.app` routes each request: a request signed with AWS Signature V4
  goes to the S3 gateway (:mod:`graveler.gateway`), ``/iceberg/api`` to the Iceberg REST
  catalog, everything else to the web UI (:mod:`graveler.ui`);
* :mod:`graveler.server.credentials` keeps access keys in the refs database, their secrets
  encrypted under the server's key;
* :mod:`graveler.server.auth` turns a request's credentials into a :class:`Principal`
  (signatures, bearer tokens, the UI's session cookie) and says what it may do;
* :mod:`graveler.server.sigv4` checks AWS Signature Version 4;
* :mod:`graveler.server.run` starts uvicorn with N worker processes.

The server keeps no state of its own: refs, staging, uploads and keys live in the refs
database, bytes in the object store, so any number of workers or replicas serve the same
repositories.
"""
