"""What the benchmarks share: throwaway databases, Django's set-up, the demo, generated import files, the scoring
form an expert sends, and starting, watching and stopping servers. Nothing here is timed or prints.

A benchmark puts the repository root on sys.path, then `from benchmarks.kit import ...`.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# --- generated benchmark data: the methodology's vocabulary and the words answers are made of ---------------

DIMENSIONS = ["textual", "hermeneutical", "doctrinal", "historical", "apologetics", "intertextual"]
DIFFICULTIES = ["easy", "medium", "hard", "expert"]
TRADITIONS = [None, "catholic", "orthodox", "reformed", "evangelical", "pentecostal"]
TYPES = ["factual_recall", "comparative_analysis", "applied_reasoning", "contested_topic"]
# One model of the primary judge's family (Google): its items also get the secondary judge.
MODELS = [("anthropic/claude-sonnet-4.5", "Anthropic", "claude"), ("openai/gpt-4o", "OpenAI", "gpt"),
          ("google/gemini-2.5-pro", "Google", "gemini"), ("meta-llama/llama-3.3-70b-instruct", "Meta", "llama")]
WORDS = ("grace covenant λόγος חֶסֶד ἱλαστήριον atonement council Nicaea patristic exegesis typology "
         "justification theosis sacrament canon septuagint hermeneutic tradition scripture").split()


def import_files_write(directory: Path, *, n_cases: int, seed: int, id_prefix: str,
                       tradition_of: Callable[[int], str | None],
                       visibility_of: Callable[[int], str]) -> tuple[Path, Path]:
    """cases.jsonl (n_cases cases) and responses.jsonl (one 40–400-word answer per case and model of MODELS) in
    `directory`, the same files for the same arguments: (cases, responses)."""
    rng = random.Random(seed)
    cases, responses = directory / "cases.jsonl", directory / "responses.jsonl"
    with open(cases, "w", encoding="utf-8") as handle:
        for i in range(n_cases):
            handle.write(json.dumps({
                "external_id": f"{id_prefix}-{i:05d}", "dimension": DIMENSIONS[i % 6],
                "difficulty": DIFFICULTIES[i % 4], "tradition": tradition_of(i), "question_type": TYPES[i % 4],
                "visibility": visibility_of(i), "is_active": True, "prompt": " ".join(rng.choices(WORDS, k=30)) + "?",
                "reference_answer": "", "version": 1,
            }, ensure_ascii=False) + "\n")
    with open(responses, "w", encoding="utf-8") as handle:
        for i in range(n_cases):
            for name, provider, family in MODELS:
                words = rng.randint(40, 400)
                handle.write(json.dumps({
                    "case": f"{id_prefix}-{i:05d}", "model": name, "provider": provider, "family": family,
                    "run_label": "bench", "text": " ".join(rng.choices(WORDS, k=words)), "temperature": 0.7,
                    "max_tokens": 2000, "system_prompt": "", "settings": {}, "prompt_tokens": 60,
                    "completion_tokens": int(words * 1.4),
                }, ensure_ascii=False) + "\n")
    return cases, responses


# --- databases and Django ------------------------------------------------------------------------------------

@dataclass
class Database:
    """A throwaway database: `url` for DATABASE_URL, `drop` to remove it (also the SQLite file's folder)."""

    url: str
    vendor: str
    drop: Callable[[], None]

    @property
    def name(self) -> str:
        """The database's name on its server (PostgreSQL), or the SQLite file's path."""
        return self.url.rsplit("/", 1)[1]


def throwaway_database(server_url: str | None, *, prefix: str = "bench") -> Database:
    """A fresh PostgreSQL database `<prefix>_<x>` on `server_url`, or a SQLite file in a temporary folder."""
    if server_url:
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        base = server_url.rsplit("/", 1)[0]
        with psycopg.connect(server_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # name is generated above, not user input

        def drop_pg() -> None:
            with psycopg.connect(server_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

        return Database(url=f"{base}/{name}", vendor="PostgreSQL", drop=drop_pg)
    tmp = Path(tempfile.mkdtemp(prefix=f"fb-{prefix}-"))
    return Database(url=f"sqlite:///{tmp / 'bench.sqlite3'}", vendor="SQLite",
                    drop=lambda: shutil.rmtree(tmp, ignore_errors=True))


def django_setup(database: Database, settings_module: str = "config.settings.test") -> None:
    os.environ["DATABASE_URL"] = database.url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module)
    import django

    django.setup()


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def demo_load() -> Any:
    """Migrate and load the whole demo (as `manage.py load_demo` does, without its snapshot); the demo cycle."""
    from django.core.management import call_command
    from django.db import transaction

    from annotations.models import CalibrationCycle
    from calibration.demo import DEMO_CYCLE_NAME, demo_people_create, demo_scores_create
    from evaluations.demo import demo_benchmark_load
    from evaluations.judge.demo import judge_demo_run

    call_command("migrate", verbosity=0)
    with transaction.atomic():
        demo_benchmark_load()
    judge_demo_run()
    with transaction.atomic():
        demo_people_create()
        demo_scores_create()
    return CalibrationCycle.objects.select_related("rubric").get(name=DEMO_CYCLE_NAME)


def admin_user(email: str = "admin@bench.test") -> Any:
    from accounts.models import User
    from accounts.services import user_create

    return User.objects.filter(email=email).first() or user_create(
        email=email, password=None, role=User.Role.ADMIN, display_name="Bench Admin", is_superuser=True)


def session_for(user: Any) -> str:
    """A signed-in session stored on the server, as a sign-in would leave it: the cookie value."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return str(session.session_key)


# --- an expert's scoring form, as the scoring page's htmx sends it -------------------------------------------

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SCORE_FIELD = re.compile(r'name="score-([A-Za-z]+)"')
RATIONALE = "Faithful to the tradition's sources; the original-language point is handled precisely."


@dataclass(frozen=True)
class ScoringForm:
    """An item page as an expert answers it: its CSRF token and score keys, the scores given (random), the
    headers htmx sends; `complete` is False when the page lacks the token or any score field."""

    token: str
    keys: list[str]
    scores: dict[str, int]
    headers: dict[str, str]

    @property
    def complete(self) -> bool:
        return bool(self.token and self.keys)

    @property
    def summary(self) -> str:
        return f"token {bool(self.token)}, {len(self.keys)} score fields"

    def draft(self, draft: int, drafts: int) -> dict[str, str]:
        """Autosave `draft` of `drafts`: a growing share of the scores, the rationale with the last."""
        shown = self.keys[: max(1, round(len(self.keys) * draft / drafts))]
        fields = {f"score-{k}": str(self.scores[k]) for k in shown}
        fields.update(rationale=RATIONALE if draft == drafts else "", broken_note="", seconds="5",
                      csrfmiddlewaretoken=self.token)
        return fields

    def submit(self) -> dict[str, str]:
        fields = {f"score-{k}": str(v) for k, v in self.scores.items()}
        fields.update(rationale=RATIONALE, broken_note="", seconds="5", csrfmiddlewaretoken=self.token)
        return fields


def scoring_form(html: str, *, base: str, path: str, rng: random.Random) -> ScoringForm:
    """Read an item page at `path`; draw a score 0–3 per key from `rng` (only when the page is complete)."""
    found = TOKEN.search(html)
    token = found.group(1) if found else ""
    keys = list(dict.fromkeys(SCORE_FIELD.findall(html)))
    scores = {key: rng.choice([0, 1, 1, 2, 2, 2, 3]) for key in keys} if token and keys else {}
    headers = {"HX-Request": "true", "X-CSRFToken": token, "HX-Current-URL": base + path}
    return ScoringForm(token=token, keys=keys, scores=scores, headers=headers)


# --- servers ------------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_cpu(master: int) -> float:
    """User + system CPU seconds of a server's master process and its workers so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [master]
    try:
        for task in Path(f"/proc/{master}/task").iterdir():
            pids += [int(p) for p in (task / "children").read_text().split()]
        return sum(sum(int(v) for v in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
                   for pid in pids) / ticks
    except (FileNotFoundError, ProcessLookupError):
        return float("nan")


def answering(server: subprocess.Popen, url: str, *, seconds: float, name: str, log: Path) -> None:
    """Return once `url` answers 200; raise (naming `log`) if the server exits or is silent for `seconds`."""
    import httpx

    deadline = time.time() + seconds
    while time.time() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{name} exited with {server.returncode}; see {log}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{name} did not answer within {seconds:g} s; see {log}")


def stop(process: subprocess.Popen | None) -> None:
    """SIGTERM, then kill after 30 s."""
    if process is not None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def finish(database: Database, log: Path, *, keep_log: bool, label: str) -> None:
    """After a server benchmark: close this process's connections, drop the database; keep the servers' log
    (printing `label: path`) or remove it."""
    from django.db import connections

    connections.close_all()
    database.drop()
    if keep_log:
        print(f"{label}: {log}")
    else:
        log.unlink(missing_ok=True)


def pct(values: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(values, q)) if values else float("nan")


def repetitions_args(doc: str | None, *, quick: int, full: int, seed: int) -> tuple[int, argparse.Namespace]:
    """The command line of a simulation benchmark: --quick (`quick` repetitions instead of `full`), --reps N and
    --seed N; returns the repetitions to run and the parsed arguments."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    parser.add_argument("--quick", action="store_true", help=f"{quick:,} repetitions instead of {full:,}")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=seed)
    args = parser.parse_args()
    return args.reps or (quick if args.quick else full), args
