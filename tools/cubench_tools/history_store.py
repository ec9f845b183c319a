"""The results history's SQLite file: its schema, how it is opened, and how a result file goes in.

One database holds every run a team added: a `runs` row per result file (its GPU, driver,
toolkit and library versions, cubench revision, date, host, flags) and a `rows` row per benchmark
of it (its median time, the samples' spread, counters, conditions, status and kernels). Python's
sqlite3 and one file: no server, and the file can live beside the results in CI.

Reliability: a file goes in as one transaction (a crash mid-add leaves the database as it was
before that file); the journal is WAL and a writer waits for another (busy timeout) instead of
failing or corrupting; a file added twice (the same bytes: its sha256) adds nothing; a database
that is not SQLite, is another program's, or was written by a newer cubench is an InputError (one
line, exit 2). The schema has a version (table `meta`), and `upgrade` brings an older one to the
current version in place.
"""
import contextlib
import datetime
import hashlib
import json
import math
import os
import sqlite3
import statistics
import time

from . import json_values
from . import results
from . import row_outcome
from .input_error import InputError

SCHEMA_VERSION = 3
APPLICATION = "cubench-history"
BUSY_TIMEOUT_MS = 30000  # a second writer waits this long for the first's transaction
# The context fields that say what made a run: the keys runs are told apart and explained by.
RUN_FIELDS = ("gpu", "gpu_memory_bytes", "gpu_compute_capability", "gpu_pci_bus_id",
              "cuda_driver_api", "cuda_toolkit", "cuda_runtime", "cublas", "cublaslt", "cusolver",
              "cudnn", "nccl", "libtorch", "git_revision", "host_name", "gpu_power_limit_W",
              "suite", "stopping", "processes", "executable")

_TABLES_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, path TEXT NOT NULL, date TEXT,
  fields TEXT NOT NULL,      -- JSON: RUN_FIELDS present in the file's context
  context TEXT NOT NULL,     -- JSON: the whole context, for what RUN_FIELDS leaves out
  complete INTEGER NOT NULL  -- 0: a file cut mid-write or an interrupted run (its finished rows)
);
CREATE TABLE rows (
  run INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL,
  status TEXT NOT NULL,      -- measured, or why not (results.STATUSES), the why in reason
  reason TEXT, median_us REAL, samples INTEGER, spread REAL, counters TEXT NOT NULL,
  label TEXT, PRIMARY KEY (run, name)
);
"""
# Version 2: the conditions and kernels a change is explained by, in columns of their own, and
# the row's family (from its file's schema, which names hold no more).
_UPGRADE_TO_2 = """
ALTER TABLE rows ADD COLUMN sm_clock_MHz REAL;
ALTER TABLE rows ADD COLUMN power_capped_pct REAL;
ALTER TABLE rows ADD COLUMN kernels TEXT;
ALTER TABLE rows ADD COLUMN family TEXT;
CREATE INDEX rows_by_name ON rows(name);
"""
# Version 3: each repetition's (a merged file's: each process's) time, so that the history judges
# two runs of a row by the rule tools/compare uses (verdicts.judge), not by their medians alone.
_UPGRADE_TO_3 = """
ALTER TABLE rows ADD COLUMN times TEXT;
"""


@contextlib.contextmanager
def transaction(db):
    """One write transaction (the connection is in autocommit mode, so it is begun here): all of
    it or none. IMMEDIATE takes the write lock at once, so a second writer waits at the start
    (busy timeout) rather than failing halfway."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _version(db, path):
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as e:
        raise InputError(f"{path}: not an SQLite database ({e})")
    if not tables:
        return 0
    if "meta" not in tables:
        raise InputError(f"{path}: an SQLite database, but not a cubench history (no meta table)")
    meta = dict(db.execute("SELECT key, value FROM meta"))
    if meta.get("application") != APPLICATION:
        raise InputError(f"{path}: an SQLite database, but not a cubench history")
    try:
        return int(meta.get("schema_version", ""))
    except ValueError:
        raise InputError(f"{path}: a cubench history whose schema version is unreadable")


def upgrade(db, version):
    """Brings a database at `version` to SCHEMA_VERSION, in one transaction."""
    with transaction(db):
        _upgrade_steps(db, _version(db, "history") if version is None else version)


def _upgrade_steps(db, version):
    """The steps from `version` up, inside the caller's transaction."""
    if version < 1:
        for statement in filter(str.strip, _TABLES_V1.split(";")):
            db.execute(statement)
        db.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
        db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    if version < 2:
        for statement in filter(str.strip, _UPGRADE_TO_2.split(";")):
            db.execute(statement)
    if version < 3:
        for statement in filter(str.strip, _UPGRADE_TO_3.split(";")):
            db.execute(statement)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def _when_unlocked(step):
    """step() again while another writer holds the file: SQLite answers some steps (switching a new
    file to WAL, a read racing a writer's first transaction) with "locked" at once, without its
    busy handler; they are retried here for as long as the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return step()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _check_access(path, create):
    """InputError, in words, where the file (or, to add, its folder: SQLite writes its journal
    beside it) cannot be read or written: SQLite itself would say "not a database" or "attempt to
    write a readonly database" halfway through."""
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.exists(path):
        try:
            os.close(os.open(path, os.O_RDWR if create else os.O_RDONLY))
        except OSError as e:
            doing = "cannot write it (tools/history add writes the history)" if create else "cannot read it"
            raise InputError(f"{path}: {doing}: {e.strerror}")
    if create:
        try:  # the journal and write-ahead log go beside the database
            probe = os.path.join(parent, f".cubench-history-probe{os.getpid()}")
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.remove(probe)
        except OSError as e:
            raise InputError(f"{path}: cannot write in its directory {parent} (SQLite keeps its "
                             f"journal there): {e.strerror}")


def remove_if_empty(path):
    """Removes a history that holds no run (made by a command that then failed), with SQLite's
    files beside it."""
    try:
        db = sqlite3.connect(path)
        runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        db.close()
    except sqlite3.DatabaseError:
        runs = 0
    if runs == 0:
        for leftover in (path, path + "-wal", path + "-shm", path + "-journal"):
            with contextlib.suppress(OSError):
                os.remove(leftover)


def connect(path, create=True):
    """The history at path, at the current schema version (created or upgraded as needed)."""
    if not create and not os.path.exists(path):
        raise InputError(f"{path}: no such history (tools/history add makes it)")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory; name the history's file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"{path}: its directory {parent} does not exist")
    _check_access(path, create)
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = _when_unlocked(lambda: _version(db, path))
        if version == 0 and not create:  # a reader never makes a history of an empty file
            raise InputError(f"{path}: empty, not a cubench history (tools/history add makes one)")
        if version > SCHEMA_VERSION:
            raise InputError(f"{path}: written by a newer cubench (history schema {version}; "
                             f"this one reads up to {SCHEMA_VERSION})")
        _when_unlocked(lambda: db.execute("PRAGMA journal_mode = WAL"))
        if version < SCHEMA_VERSION:
            with transaction(db):  # read again under the write lock: another writer may have
                version = _version(db, path)  # made or upgraded it meanwhile
                if version < SCHEMA_VERSION:
                    _upgrade_steps(db, version)
    except sqlite3.DatabaseError as e:
        raise InputError(f"{path}: not a usable SQLite database ({e})")
    return db


def _kernels(result):
    """What a row's kernels note says one run launched (cubench --cubench_kernels=on), as the
    history has always held it: without the note's leading "kernels: "; None where CUPTI named
    none or the row has no such note."""
    for note in result.notes:
        if note["kind"] == "kernels" and note.get("named", True):
            text = note["text"]
            return text[len("kernels: "):] if text.startswith("kernels: ") else text
    return None


def _row_record(result, row):
    times = result.times
    median = statistics.median(times) if times else None
    spread = None
    if len(times) >= 2:  # across repetitions or processes: the interquartile range over the median
        q = statistics.quantiles(times, n=4, method="inclusive")
        spread = (q[2] - q[0]) / median if median else None
    elif row and json_values.is_number(row.get("sample_cv")):  # one repetition: its own samples'
        spread = float(row["sample_cv"])
    samples = int(row["samples"]) if row and json_values.is_number(row.get("samples")) else len(times)
    counters = {k: result.median(k) for k in result.counters}
    counters = {k: v for k, v in counters.items() if not math.isnan(v)}
    return dict(status=result.status, reason=result.reason or None,
                median_us=median, samples=samples, spread=spread, counters=json.dumps(counters),
                label=result.label, sm_clock_MHz=counters.get("sm_clock_MHz"),
                power_capped_pct=counters.get("power_capped_pct"), kernels=_kernels(result),
                times=json.dumps(times) if times else None)


def run_date(path, context):
    """The run's date (context "date", as Google Benchmark writes it: ISO 8601), which orders the
    history's runs; InputError where it is missing or not a date: such a run would sort as the
    newest (or the oldest) and make every gate compare the wrong runs."""
    date = context.get("date")
    if not isinstance(date, str) or not date.strip():
        raise InputError(f"{path}: no run date (context \"date\"); the history orders runs by it")
    try:
        datetime.datetime.fromisoformat(date)
    except ValueError:
        raise InputError(f"{path}: context \"date\" {json.dumps(date[:40])} is not a date (ISO 8601, "
                         "e.g. 2026-12-01T09:30:00+00:00); the history orders runs by it")
    return date


def read_file(path):
    """(raw bytes, data, context, {name: Result}) of a result file to add, checked whole before
    anything is written: InputError (one line) for a file the history cannot take."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    data = results.read(path)  # a file cut mid-write: its complete rows, and results' warning
    context, by_name = results.load(path)
    run_date(path, context)
    return raw, data, context, by_name


def add_file(db, path, checked=None):
    """Adds one result file in one transaction; returns (rows added, "" or why it is partial);
    (0, "already in the history") for a file added before. checked: read_file(path)'s answer."""
    raw, data, context, by_name = checked or read_file(path)
    sha = hashlib.sha256(raw).hexdigest()
    partial = ""
    try:
        json.loads(raw)
    except ValueError:
        partial = "cut mid-write: its complete rows only"
    if "interrupted" in context:
        partial = f"from a run interrupted by {context['interrupted']}: its finished rows only"
    first_row = {}
    for row in filter(row_outcome.is_iteration, data["benchmarks"]):
        first_row.setdefault(row_outcome.run_name(row), row)
    fields = {k: str(context[k]) for k in RUN_FIELDS if k in context}
    with transaction(db):  # all of this file's rows, or none
        # Asked under the write lock: two writers adding one file at once add it once.
        if db.execute("SELECT 1 FROM runs WHERE sha256 = ?", (sha,)).fetchone():
            return 0, "already in the history"
        cursor = db.execute(
            "INSERT INTO runs (sha256, path, date, fields, context, complete) VALUES (?,?,?,?,?,?)",
            (sha, path, str(context.get("date", "")), json.dumps(fields, sort_keys=True),
             json.dumps(context, sort_keys=True, default=str), 0 if partial else 1))
        run = cursor.lastrowid
        for name, result in by_name.items():
            r = _row_record(result, first_row.get(result.run_name))
            db.execute("INSERT INTO rows (run, name, status, reason, median_us, samples, spread, "
                       "counters, label, sm_clock_MHz, power_capped_pct, kernels, family, times) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       (run, name, r["status"], r["reason"], r["median_us"], r["samples"],
                        r["spread"], r["counters"], r["label"], r["sm_clock_MHz"],
                        r["power_capped_pct"], r["kernels"], result.family, r["times"]))
    return len(by_name), partial


def runs(db):
    """Every run, oldest first: [(id, date, path, {field: value})]."""
    out = db.execute("SELECT id, date, path, fields FROM runs ORDER BY date, id").fetchall()
    return [(i, d, p, json.loads(f)) for i, d, p, f in out]


def series(db, name_filter=None, gpu=None):
    """{row name: [point]} over runs in date order, a point being a dict of the row's record and
    its run's fields; only measured rows; `name_filter` a compiled regex, `gpu` a substring of the
    GPU's name."""
    query = ("SELECT r.name, r.median_us, r.spread, r.samples, r.sm_clock_MHz, r.power_capped_pct, "
             "r.kernels, r.family, runs.id, runs.date, runs.fields, runs.path, r.counters, r.times, "
             "r.label "
             "FROM rows r JOIN runs "
             "ON r.run = runs.id WHERE r.status = 'measured' AND r.median_us IS NOT NULL "
             "ORDER BY runs.date, runs.id")
    out = {}
    for (name, median, spread, samples, clock, capped, kernels, family, run, date, fields,
         path, counters, times, label) in db.execute(query):
        fields = json.loads(fields)
        if name_filter and not name_filter.search(name):
            continue
        if gpu and gpu.lower() not in fields.get("gpu", "").lower():
            continue
        out.setdefault(name, []).append(dict(
            median_us=median, spread=spread, samples=samples, sm_clock_MHz=clock,
            power_capped_pct=capped, kernels=kernels, family=family, run=run, date=date, fields=fields,
            path=path, counters=json.loads(counters), times=json.loads(times) if times else [median],
            notes=row_outcome.notes_of_label(label or "")))
    return out
