"""The S3 gateway: every S3 client reads and writes graveler branches.

Addressing follows lakeFS: the bucket is the repository and the key is ``REF/PATH``
(path-style ``http://HOST:PORT/REPO/REF/PATH``; virtual-host style ``REPO.DOMAIN`` when the
server is given a domain). Reads work at any ref expression; writes and deletes go to
branches only, staged exactly as :meth:`graveler.Repository.put` stages them. Commits and
merges stay with the Python API, the CLI, the orchestrators and the web UI.

Modules, one concept each:

* :mod:`graveler.server.s3.app` -- the ASGI application: authentication, routing, errors;
* :mod:`graveler.server.s3.request` -- a request as S3 sees it (bucket, ref, path, query);
* :mod:`graveler.server.s3.errors` -- S3 error codes and how graveler's errors map to them;
* :mod:`graveler.server.s3.xml` -- the XML bodies S3 answers with and accepts;
* :mod:`graveler.server.s3.body` -- request payloads: plain, ``aws-chunked`` (signed and
  unsigned, with trailing checksums), and their digests;
* :mod:`graveler.server.s3.conditions` -- ``Range`` and the ``If-*`` preconditions;
* :mod:`graveler.server.s3.objects`, :mod:`graveler.server.s3.listing`,
  :mod:`graveler.server.s3.buckets`, :mod:`graveler.server.s3.uploads` -- the operations.
"""
