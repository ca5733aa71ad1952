"""The S3 gateway: every S3 client reads and writes graveler branches.

Addressing follows lakeFS: the bucket is the repository and the key is ``REF/PATH``
(path-style ``http://HOST:PORT/REPO/REF/PATH``; virtual-host style ``REPO.DOMAIN`` when the
server is given a domain). Reads work at any ref expression; writes and deletes go to
branches only, staged exactly as :meth:`graveler.Repository.put` stages them. Commits and
merges stay with the Python API, the CLI, the orchestrators and the web UI.

Modules, one concept each:

* :mod:`graveler.gateway.app` -- the ASGI application: authentication, routing, errors;
* :mod:`graveler.gateway.request` -- a request as S3 sees it (bucket, ref, path, query);
* :mod:`graveler.gateway.errors` -- S3 error codes and how graveler's errors map to them;
* :mod:`graveler.gateway.xml` -- the XML bodies S3 answers with and accepts;
* :mod:`graveler.gateway.body` -- request payloads: plain, ``aws-chunked`` (signed and
  unsigned, with trailing checksums), and their digests;
* :mod:`graveler.gateway.conditions` -- ``Range`` and the ``If-*`` preconditions;
* :mod:`graveler.gateway.objects`, :mod:`graveler.gateway.listing`,
  :mod:`graveler.gateway.buckets`, :mod:`graveler.gateway.uploads` -- the operations.
"""
