"""Facade tests reuse the object store suite's loopback moto server for S3 namespaces."""

from tests.objectstore.conftest import aws_env, moto_endpoint, s3_bucket, s3_client

__all__ = ["aws_env", "moto_endpoint", "s3_bucket", "s3_client"]
