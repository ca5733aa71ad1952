"""Which client settings a Spark job uses, resolved once on the driver.

The driver plans, stages and commits; executors only read and write object bytes, and need
exactly one thing from the driver: its client settings (store endpoint, region, credentials).
They travel inside the plan (in :class:`graveler_spark.job.WriteJob`, the read plan and the
GC closures), so an executor never reads its own environment for them. Where the driver was
given no credentials at all, none are sent and each executor uses boto3's own chain (instance
role, profile), as AWS clusters expect.

Sources, first wins (per field; store options key by key; credentials as one set, never a key
id from one source with a secret from another):

1. data source options (``store.<name>``, ``database_url``, ``home``, the ``s3_*`` /
   ``aws_*`` keys of :mod:`graveler.config`), or the client passed to a helper;
2. defaults bound by :func:`graveler_spark.register`;
3. Spark's configuration, read where graveler has the session in hand (``register()``,
   :func:`graveler_spark.spark_session`, ``write_native`` / ``read_native`` without a
   client, ``graveler gc --spark``): the S3A keys of :data:`S3A_KEYS`, as
   ``spark.hadoop.fs.s3a.*``. PySpark does not hand its configuration to Python data sources
   it finds by itself, so a format used without ``register()`` does not see them;
4. the driver's environment (``GRAVELER_*``, ``AWS_*``; see :mod:`graveler.config`).

Secrets never leave these objects in clear text except towards the executors (inside the
pickled plan, which Spark neither shows nor logs). The S3A names Spark users put secrets
under (``...access.key``, ``...secret.key``, ``...session.token``) all match Spark's default
``spark.redaction.regex``, so its UI and event logs show them redacted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graveler import ClientSettings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

HADOOP_PREFIX = "spark.hadoop."
#: Hadoop S3A keys (as ``spark.hadoop.<key>`` in Spark's configuration) and the store option
#: each one sets. Per-bucket keys (``fs.s3a.bucket.<bucket>.*``) are not read.
S3A_KEYS: Mapping[str, str] = {
    "fs.s3a.endpoint": "endpoint_url",
    "fs.s3a.endpoint.region": "region",
    "fs.s3a.access.key": "access_key_id",
    "fs.s3a.secret.key": "secret_access_key",
    "fs.s3a.session.token": "session_token",
}
SSL_KEY = "fs.s3a.connection.ssl.enabled"


def resolve(options: Mapping[str, Any], defaults: ClientSettings) -> ClientSettings:
    """The effective settings of one Spark read or write on the driver: ``options`` over
    ``defaults`` (``register()``, which already hold Spark's S3A keys) over the driver's
    environment. Raises InvalidArgument for a malformed value."""
    return ClientSettings.from_mapping(options).over(defaults).over(ClientSettings.from_env())


def from_spark_conf(conf: Mapping[str, str]) -> ClientSettings:
    """Settings from Spark configuration entries (only the S3A keys of :data:`S3A_KEYS`,
    with or without the ``spark.hadoop.`` prefix; the prefixed form wins). An endpoint
    without a scheme gets ``https://``, or ``http://`` when ``fs.s3a.connection.ssl.enabled``
    is false, as S3A does."""
    plain = {k[len(HADOOP_PREFIX) :]: v for k, v in conf.items() if k.startswith(HADOOP_PREFIX)}
    values = {k: v for k, v in conf.items() if k.startswith("fs.s3a.")}
    values.update(plain)
    store: dict[str, str] = {}
    for key, option in S3A_KEYS.items():
        value = (values.get(key) or "").strip()
        if value:
            store[option] = value
    endpoint = store.get("endpoint_url")
    if endpoint and "://" not in endpoint:
        ssl = str(values.get(SSL_KEY, "true")).strip().lower() != "false"
        store["endpoint_url"] = ("https://" if ssl else "http://") + endpoint
    return ClientSettings.from_mapping({f"store.{k}": v for k, v in store.items()})


def spark_settings(spark: SparkSession) -> ClientSettings:
    """The settings Spark's configuration of ``spark`` gives (its S3A keys)."""
    return from_spark_conf(_conf_of(spark))


def _conf_of(spark: SparkSession) -> dict[str, str]:
    """Spark's configuration: the session's runtime values over the context's static ones
    (the runtime view alone where there is no context, as with Spark Connect)."""
    conf: dict[str, str] = {}
    context = getattr(spark, "_sc", None)  # classic PySpark; Spark Connect has none
    if context is not None:
        conf.update(context.getConf().getAll())
    conf.update(spark.conf.getAll)  # a property in PySpark 4
    return conf
