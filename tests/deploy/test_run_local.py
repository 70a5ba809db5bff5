"""`make run` = `manage.py run_local`: the web server and the task worker together (config/supervise.py). A worker
that stops is restarted and the console says so; the web server stopping stops everything with its exit code;
Ctrl-C (SIGINT) stops both children, each told once."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from config import supervise
from config.supervise import Supervisor, exit_reason

PY = sys.executable


def sleeper(seconds: float, pid_file: Path | None = None) -> list[str]:
    """A child that writes its pid (optional) and sleeps; SIGINT ends it (KeyboardInterrupt)."""
    write = f"open({str(pid_file)!r}, 'a').write(str(os.getpid()) + '\\n'); " if pid_file else ""
    return [PY, "-c", f"import os, time; {write}time.sleep({seconds})"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_exit_reason_names_codes_and_signals() -> None:
    assert exit_reason(3) == "exit code 3"
    assert exit_reason(-signal.SIGKILL) == "killed by SIGKILL"


def test_a_worker_that_stops_is_restarted_and_the_console_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(supervise, "MIN_DELAY", 0.2)
    pids = tmp_path / "worker.pids"
    out = io.StringIO()
    crash = [PY, "-c", f"import os, sys; open({str(pids)!r}, 'a').write(str(os.getpid()) + '\\n'); sys.exit(3)"]
    code = Supervisor(web=sleeper(2.5), worker=crash, out=out, poll=0.05).run()
    log = out.getvalue()
    assert code == 0, log
    assert "the task worker stopped (exit code 3)" in log
    assert "task worker restarted (pid" in log and "restart 1)" in log
    started = pids.read_text().split()
    assert len(started) >= 2 and len(set(started)) == len(started)  # a new process each time
    # it kept dying at once: the wait grows (0.2 s, 0.4 s, …) instead of a restart loop hammering the machine
    assert "restarting it in 0 s" in log and log.count("the task worker stopped") < 8


def test_the_web_server_stopping_stops_the_worker_with_its_exit_code(tmp_path) -> None:
    pids = tmp_path / "worker.pids"
    out = io.StringIO()
    code = Supervisor(web=[PY, "-c", "import time, sys; time.sleep(1); sys.exit(4)"], worker=sleeper(60, pids),
                      out=out, poll=0.05).run()
    assert code == 4
    assert "the web server stopped (exit code 4); stopping the task worker" in out.getvalue()
    (worker_pid,) = map(int, pids.read_text().split())
    assert not alive(worker_pid)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_both_children_once(tmp_path, signum) -> None:
    web_pids, worker_pids = tmp_path / "web.pids", tmp_path / "worker.pids"
    # children that count the SIGINTs they get: told twice, db_worker would abandon its task ("Ctrl+C again to force")
    counting = textwrap.dedent("""
        import os, signal, sys, time
        path, got = sys.argv[1], []
        def handler(signum, frame):
            got.append(signum)
            open(path + ".signals", "a").write("INT\\n")
            if len(got) == 1:
                time.sleep(0.5)  # finishing the current task
                sys.exit(0)
        signal.signal(signal.SIGINT, handler)
        open(path, "a").write(str(os.getpid()) + "\\n")
        time.sleep(60)
    """)
    script = textwrap.dedent(f"""
        import sys
        from config.supervise import Supervisor
        web = [sys.executable, "-c", {counting!r}, {str(web_pids)!r}]
        worker = [sys.executable, "-c", {counting!r}, {str(worker_pids)!r}]
        sys.exit(Supervisor(web=web, worker=worker, poll=0.05).run())
    """)
    process = subprocess.Popen([PY, "-c", script], cwd=Path(__file__).resolve().parents[2],
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not (web_pids.exists() and worker_pids.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert web_pids.exists() and worker_pids.exists(), "the children did not start"
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    name = signal.Signals(signum).name
    assert f"{name}: stopping the web server and the task worker" in err and "stopped" in err
    for pids in (web_pids, worker_pids):
        (pid,) = map(int, pids.read_text().split())
        assert not alive(pid)
        assert Path(str(pids) + ".signals").read_text().split() == ["INT"]  # exactly one signal each


def test_make_serve_restarts_a_worker_that_stops(capsys) -> None:  # type: ignore[no-untyped-def]
    """`make serve` = `manage.py run_production --web SERVE_WEB --worker SERVE_WORKER`: the same supervisor."""
    from django.core.management import call_command

    call_command("run_production", "--web", f"{PY} -c 'import time; time.sleep(2.5)'",
                 "--worker", f"{PY} -c 'import sys; sys.exit(3)'")
    err = capsys.readouterr().err
    assert "[run_production] the task worker stopped (exit code 3)" in err
    assert "[run_production] task worker restarted" in err
