"""Run the web server and the task worker side by side on one machine, as `make run` does (`manage.py run_local`,
with Django's development server) and `make serve` does (`manage.py run_production`, with gunicorn).

The web process is the one that matters: when it stops, everything stops (with its exit code). The worker is
restarted whenever it stops on its own, with a line on the console saying so and why (its exit code or signal),
waiting longer (up to `MAX_DELAY`) while it keeps dying within seconds of starting. Ctrl-C (SIGINT) or SIGTERM stops
both. Each child runs in its own process group and gets exactly one signal from here, so the worker finishes its
current task once instead of being told twice by the terminal and by us ("press Ctrl+C again to force").
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

MIN_DELAY = 1.0  # seconds before restarting a worker that stopped
MAX_DELAY = 30.0  # the longest wait while it keeps stopping right after starting
STABLE_AFTER = 30.0  # a worker that ran this long before stopping is restarted after MIN_DELAY again
STOP_TIMEOUT = 15.0  # after SIGINT, how long a child may take to finish (a report computing) before SIGKILL


def exit_reason(code: int) -> str:
    """A child's return code in words: 'exit code 1' or 'killed by SIGKILL'."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass
class Child:
    """A command this supervisor started, with its process (None while it waits to be restarted)."""

    name: str
    command: Sequence[str]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    delay: float = MIN_DELAY
    restart_at: float | None = None
    env: dict[str, str] | None = field(default=None)

    def start(self) -> None:
        self.process = subprocess.Popen(list(self.command), start_new_session=True, env=self.env)
        self.started_at, self.restart_at = time.monotonic(), None

    def signal(self, signum: int) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signum)  # its group: a reloader's child too
            except ProcessLookupError:
                pass


class Supervisor:
    """Start `web` and `worker`; restart the worker when it stops; stop both on a signal or when the web stops."""

    def __init__(self, *, web: Sequence[str], worker: Sequence[str], out: TextIO | None = None,
                 env: dict[str, str] | None = None, clock: Callable[[], float] = time.monotonic,
                 poll: float = 0.2, name: str = "run_local") -> None:
        self.web, self.worker = Child("web server", web, env=env), Child("task worker", worker, env=env)
        self.out = out or sys.stderr
        self.clock, self.poll = clock, poll
        self.stopping = False
        self.name = name

    def say(self, message: str) -> None:
        print(f"[{self.name}] {message}", file=self.out, flush=True)

    def request_stop(self, signum: int, frame: object = None) -> None:
        if not self.stopping:
            self.say(f"{signal.Signals(signum).name}: stopping the web server and the task worker")
        self.stopping = True

    def run(self) -> int:
        """Supervise until the web server stops or a stop is requested; the web server's exit code (0 on a signal)."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self.request_stop)
        self.web.start()
        self.worker.start()
        assert self.web.process is not None and self.worker.process is not None
        self.say(f"web server pid {self.web.process.pid}: {' '.join(self.web.command[-2:])}")
        self.say(f"task worker pid {self.worker.process.pid}: {' '.join(self.worker.command[-2:])} "
                 "(restarted if it stops; Ctrl-C stops both)")
        code = 0
        while not self.stopping:
            time.sleep(self.poll)
            web_code = self.web.process.poll()
            if web_code is not None:
                self.say(f"the web server stopped ({exit_reason(web_code)}); stopping the task worker")
                code = web_code
                break
            self.watch_worker()
        self.stop()
        return code

    def watch_worker(self) -> None:
        worker = self.worker
        now = self.clock()
        if worker.restart_at is not None:
            if now >= worker.restart_at:
                worker.restarts += 1
                worker.start()
                assert worker.process is not None
                self.say(f"task worker restarted (pid {worker.process.pid}, restart {worker.restarts})")
            return
        assert worker.process is not None
        worker_code = worker.process.poll()
        if worker_code is None:
            return
        ran = now - worker.started_at
        worker.delay = (MIN_DELAY if ran >= STABLE_AFTER or worker.restarts == 0
                        else min(MAX_DELAY, worker.delay * 2))  # dying again right away: wait longer each time
        worker.restart_at = now + worker.delay
        worker.process = None
        self.say(f"the task worker stopped ({exit_reason(worker_code)}) after {ran:.0f} s; "
                 f"restarting it in {worker.delay:.0f} s")

    def stop(self) -> None:
        """SIGINT to each child still running (once), then SIGKILL to any still running after STOP_TIMEOUT."""
        children = [c for c in (self.worker, self.web) if c.process is not None and c.process.poll() is None]
        for child in children:
            child.signal(signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT
        for child in children:
            assert child.process is not None
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say(f"the {child.name} did not stop within {STOP_TIMEOUT:.0f} s; killing it")
                child.signal(signal.SIGKILL)
                child.process.wait()
        self.say("stopped")
