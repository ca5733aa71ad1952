"""The JVM jars of scripts/jars.txt, as `make jars` caches them in .jars/ (never downloaded
at test time)."""

from __future__ import annotations

from pathlib import Path

JARS_DIR = Path(__file__).resolve().parent.parent / ".jars"
LIST = Path(__file__).resolve().parent.parent / "scripts" / "jars.txt"
#: What ``s3a://`` needs on top of the pyspark wheel.
S3A_JARS = ("hadoop-aws", "bundle", "analyticsaccelerator-s3")


def listed() -> dict[str, str]:
    """artifact -> version of every jar in scripts/jars.txt."""
    found: dict[str, str] = {}
    for line in LIST.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            _, artifact, version = line.split(":")
            found[artifact] = version
    return found


def jar_paths(*artifacts: str) -> list[str]:
    """The cached jars of ``artifacts`` (names as in scripts/jars.txt); a clear error when
    one is missing (run ``make jars``)."""
    versions = listed()
    paths = []
    for artifact in artifacts:
        path = JARS_DIR / f"{artifact}-{versions[artifact]}.jar"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run 'make jars' (scripts/jars.txt)")
        paths.append(str(path))
    return paths


#: lakeFS's Hadoop FileSystem, built from source by ``make lakefs-hadoopfs``
#: (scripts/lakefs-hadoopfs.txt says why, and from which lakeFS release).
BUILT_LIST = LIST.with_name("lakefs-hadoopfs.txt")


def lakefs_hadoopfs_jar() -> str:
    """The cached assembly jar of lakeFS's Hadoop FileSystem; a clear error when it is missing
    (run ``make lakefs-hadoopfs``)."""
    for line in BUILT_LIST.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            coordinate, module, _sha256 = line.split()
            _, artifact, version = coordinate.split(":")
            release = module.rpartition("@")[2]
            path = JARS_DIR / f"{artifact}-{version}-lakefs-{release}.jar"
            if not path.is_file():
                raise FileNotFoundError(f"{path} is missing: run 'make lakefs-hadoopfs'")
            return str(path)
    raise ValueError(f"{BUILT_LIST} names no jar")
