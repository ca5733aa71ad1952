"""A real Spark standalone cluster on 127.0.0.1, started from the pyspark package's own scripts.

One master and a few one-core workers, each started with a clean environment (only PATH,
HOME, TMPDIR, the Spark variables and ``PYSPARK_PYTHON``): they see none of the driver's
settings, as daemons on separate hosts would. Every port is picked by Spark (``0``). As root,
a worker can get a disk of its own: it starts in a private mount namespace (``unshare -m``)
with a tmpfs over ``private_dir``, so what its executors write there is invisible to the
driver, as on a separate host. Jobs run through ``spark-submit`` with an environment given
per job. Every process is stopped by PID, with the processes it started.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT = 180.0
STOP_TIMEOUT = 20.0
MASTER_URL = re.compile(r"Starting Spark master at (spark://[0-9.]+:[0-9]+)")


def clean_env(home: Path, python: str, **extra: str) -> dict[str, str]:
    """The whole environment of a process on a fresh host: nothing inherited."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "LANG": "C.UTF-8",
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": "256m",
        "PYSPARK_PYTHON": python,
        # The executors' own AWS chain must not reach out of loopback for instance metadata.
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(home / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
    }
    env.update(extra)
    return env


def can_unshare() -> bool:
    """Whether this process may give a worker its own mount namespace (needs root)."""
    return os.geteuid() == 0


@dataclass
class Process:
    """A process this harness started, with its log file."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@dataclass
class StandaloneCluster:
    root: Path
    python: str
    workers: int = 2
    private_dir: Path | None = None  # each worker gets its own tmpfs here (root only)
    worker_memory: str = "1g"
    master: Process | None = None
    worker_processes: list[Process] = field(default_factory=list)
    url: str = ""

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._start_master()
            for n in range(self.workers):
                self._start_worker(n)
            for worker in self.worker_processes:
                _wait_for(worker, "Successfully registered with master")
        except BaseException:
            self.stop()
            raise

    def worker_dir(self, n: int) -> Path:
        return self.root / f"worker-{n}"

    def _start_master(self) -> None:
        home = self.root / "master-home"
        home.mkdir(exist_ok=True)
        command = [*self._class("master"), "--host", "127.0.0.1", "--port", "0"]
        self.master = _spawn("master", [*command, "--webui-port", "0"], self._env(home), self.root)
        found = MASTER_URL.search(_wait_for(self.master, "Starting Spark master at"))
        assert found, self.master.text()
        self.url = found.group(1)

    def _start_worker(self, n: int) -> None:
        home = self.root / f"worker-{n}-home"
        home.mkdir(exist_ok=True)
        self.worker_dir(n).mkdir(exist_ok=True)
        env = self._env(home, SPARK_WORKER_DIR=str(self.worker_dir(n)))
        command = [*self._class("worker"), "--host", "127.0.0.1", "--port", "0"]
        command += ["--webui-port", "0", "--cores", "1", "--memory", self.worker_memory, self.url]
        if self.private_dir is not None:
            self.private_dir.mkdir(parents=True, exist_ok=True)
            mount = 'mount -t tmpfs -o size=512m tmpfs "$1" && shift && exec "$@"'
            unshare = ["unshare", "-m", "--propagation", "private", "sh", "-c", mount, "sh"]
            command = [*unshare, str(self.private_dir), *command]
        self.worker_processes.append(_spawn(f"worker-{n}", command, env, self.root))

    def _class(self, role: str) -> list[str]:
        main = {"master": "master.Master", "worker": "worker.Worker"}[role]
        return [str(SPARK_HOME / "bin" / "spark-class"), f"org.apache.spark.deploy.{main}"]

    def _env(self, home: Path, **extra: str) -> dict[str, str]:
        return clean_env(home, self.python, **extra)

    def executor_pids(self) -> list[int]:
        """PIDs of the executor JVMs the workers run now."""
        found = []
        for worker in self.worker_processes:
            for pid in descendants(worker.pid):
                if "CoarseGrainedExecutorBackend" in _cmdline(pid):
                    found.append(pid)
        return found

    def stop(self) -> None:
        """Stop the workers (their executors with them), then the master; by PID."""
        for process in [*reversed(self.worker_processes), *([self.master] if self.master else [])]:
            stop_tree(process.popen)

    def submit(
        self,
        script: Path,
        args: Sequence[str],
        env: Mapping[str, str],
        conf: Mapping[str, str],
        log: Path,
        on_line: Callable[[str], None] | None = None,
        timeout: float = 420.0,
    ) -> Submitted:
        """Run ``script`` with ``spark-submit`` on this cluster, in exactly ``env``; returns
        its stdout lines (stderr goes to ``log``). ``on_line`` sees each line as it comes."""
        command = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", self.url]
        for key, value in conf.items():
            command += ["--conf", f"{key}={value}"]
        return run_logged([*command, str(script), *args], env, log, on_line, timeout)


@dataclass
class Submitted:
    returncode: int
    lines: list[str]
    log: Path

    def results(self, prefix: str = "RESULT ") -> list[str]:
        return [line[len(prefix) :] for line in self.lines if line.startswith(prefix)]


def run_logged(
    command: Sequence[str],
    env: Mapping[str, str],
    log: Path,
    on_line: Callable[[str], None] | None = None,
    timeout: float = 420.0,
) -> Submitted:
    """Run ``command``; stdout is returned line by line (``on_line`` sees each as it comes,
    on a reader thread), stderr goes to ``log``. The whole process tree is stopped if it
    outlives ``timeout``."""
    lines: list[str] = []
    with open(log, "wb") as err:
        popen = subprocess.Popen(
            list(command),
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )

        def read() -> None:
            assert popen.stdout is not None
            for raw in popen.stdout:
                line = raw.decode(errors="replace").rstrip("\n")
                lines.append(line)
                if on_line is not None:
                    on_line(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            popen.wait(timeout=timeout)
        finally:
            if popen.poll() is None:
                stop_tree(popen)
        reader.join(timeout=30)
    log.with_suffix(".stdout").write_text("\n".join(lines))
    return Submitted(popen.returncode, lines, log)


def _spawn(name: str, command: list[str], env: dict[str, str], root: Path) -> Process:
    log = root / f"{name}.log"
    with open(log, "wb") as out:
        popen = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    return Process(name, popen, log)


def _wait_for(process: Process, marker: str) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = process.text()
        if marker in text:
            return text
        if process.popen.poll() is not None:
            raise RuntimeError(f"{process.name} exited ({process.popen.returncode}):\n{text}")
        time.sleep(0.2)
    raise TimeoutError(f"{process.name} did not log {marker!r} in {START_TIMEOUT} s")


# --- processes by PID -----------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent PID, start time) of ``pid``, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields[19]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children first found, then theirs)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                children.setdefault(stat[0], []).append(int(entry.name))
    found: list[int] = []
    queue = list(children.get(pid, []))
    while queue:
        child = queue.pop(0)
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def stop_tree(popen: subprocess.Popen[bytes]) -> None:
    """SIGTERM ``popen``, then SIGKILL it and whatever it started that is still there
    (only those very processes: each is checked against its start time)."""
    below = [(pid, _stat(pid)) for pid in descendants(popen.pid)]
    if popen.poll() is None:
        popen.send_signal(signal.SIGTERM)
        try:
            popen.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
    for pid, stat in below:
        now = _stat(pid)
        if stat is not None and now is not None and now[1] == stat[1]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def in_namespace_of(pid: int, command: Sequence[str]) -> str:
    """Run ``command`` in the mount namespace of process ``pid`` (what that host sees)."""
    result = subprocess.run(
        ["nsenter", "-t", str(pid), "-m", *command], capture_output=True, text=True, check=True
    )
    return result.stdout


def lines_of(paths: Iterator[Path]) -> Iterator[str]:
    for path in paths:
        if path.is_file():
            yield from path.read_text(errors="replace").splitlines()
