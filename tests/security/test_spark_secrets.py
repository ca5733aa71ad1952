"""No secret is printed by Spark: the refs database URL given as a data source option, with a
sentinel password, in every way it can fail, for reads and writes (the root conftest runs this
module with the Spark suite, so the graveler data source resolves in the first session).

Reproduced before the fix: the URL, password included, appeared inside Spark's
``PYTHON_DATA_SOURCE_ERROR``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.security.secrets import PASSWORD, S3_SECRET, URLS, assert_hidden, shown

#: One per way the URL reaches a message (the driver's error, our InvalidArgument quoting the
#: URL); every URL goes through the same redaction in test_secrets.py, without a Spark job.
SPARK_URLS = {k: URLS[k] for k in ("unreachable server", "malformed port", "driver not installed")}


@pytest.mark.parametrize("url", SPARK_URLS.values(), ids=SPARK_URLS.keys())
def test_data_source_option_errors(spark: Any, url: str) -> None:
    with pytest.raises(Exception) as read:
        spark.read.format("graveler").option("database_url", url).load("graveler://lake/main/t")
    df = spark.createDataFrame([(1, "a")], ["id", "v"])
    with pytest.raises(Exception) as written:
        df.write.format("graveler").option("database_url", url).mode("append").save(
            "graveler://lake/main/t"
        )
    for failed in (read, written):
        text = shown(failed.value)
        assert "graveler.core.errors." in text  # our error, carried out by Spark
        assert_hidden(text)


def test_settings_of_a_read_do_not_show_secrets() -> None:
    from graveler_spark.settings import resolve

    from graveler import ClientSettings

    options = {
        "database_url": f"postgresql+psycopg://u:{PASSWORD}@h/d",
        "store.secret_access_key": S3_SECRET,
        "store.access_key_id": "AKIDEXAMPLE",
    }
    settings = resolve(options, ClientSettings())
    assert settings.store_options["secret_access_key"] == S3_SECRET  # kept, not shown
    assert_hidden(repr(settings), str(settings))
