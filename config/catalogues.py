"""The interface's message catalogues without GNU gettext: read a .po, write a .po and its compiled .mo, and make the
pseudo-locales the tests use to find strings nobody marked for translation (docs/languages.md).

Serving needs only the committed .mo files; `makemessages` (which runs xgettext) is needed only to extract new
strings. The .mo writer is the GNU format (magic 0x950412de, sorted keys, no hash table), which Python's `gettext`
and Django read; `manage.py compile_catalogues` writes them so a translator without gettext can still compile.

Pseudo-locales (names as in Android's): ``en-xa`` lengthens and accents every message and wraps it in ⟦…⟧, so an
English word on a page rendered in it is a string that is not marked; ``ar-xb`` wraps the English in a right-to-left
override and, because its base language is Arabic (settings.LANGUAGES_BIDI), turns the page right-to-left.
"""
from __future__ import annotations

import ast
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PSEUDO_ACCENTED = "en-xa"
PSEUDO_RTL = "ar-xb"
PSEUDO_OPEN, PSEUDO_CLOSE = "\u27e6", "\u27e7"  # ⟦ ⟧
RLO, PDF = "\u202e", "\u202c"


@dataclass
class Entry:
    """One message: msgctxt/msgid/msgid_plural and its translations (msgstr, or msgstr[n] for plurals)."""

    msgid: str
    msgstr: list[str] = field(default_factory=lambda: [""])
    msgid_plural: str | None = None
    msgctxt: str | None = None
    flags: set[str] = field(default_factory=set)
    comments: list[str] = field(default_factory=list)  # "#: …", "#. …" lines, kept as written

    @property
    def fuzzy(self) -> bool:
        return "fuzzy" in self.flags

    @property
    def translated(self) -> bool:
        return all(s != "" for s in self.msgstr)

    @property
    def key(self) -> str:
        return f"{self.msgctxt}\x04{self.msgid}" if self.msgctxt is not None else self.msgid


def _unquote(line: str) -> str:
    return ast.literal_eval(line.strip())  # a .po string is a C string: Python's literal reads it


def read_po(path: Path) -> tuple[Entry, list[Entry]]:
    """(the header entry, the messages) of a .po file; obsolete (#~) entries are skipped."""
    entries: list[Entry] = []
    current: Entry | None = None
    target: tuple[str, int] | None = None
    flags: set[str] = set()
    comments: list[str] = []

    def finish() -> None:
        nonlocal current
        if current is not None:
            entries.append(current)
        current = None

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            finish()
            continue
        if line.startswith("#~"):
            continue
        if line.startswith("#,"):
            finish()
            flags |= {f.strip() for f in line[2:].split(",") if f.strip()}
            continue
        if line.startswith("#"):
            finish()
            comments.append(raw)
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            if current is None or target is None:
                raise ValueError(f"{path}: a continued string outside an entry: {raw!r}")
            name, index = target
            if name == "msgstr":
                current.msgstr[index] += _unquote(line)
            else:
                setattr(current, name, (getattr(current, name) or "") + _unquote(line))
            continue
        starts = keyword == "msgctxt" or (keyword == "msgid" and target != ("msgctxt", 0))
        if starts or current is None:
            finish()
            current = Entry(msgid="", flags=flags, comments=comments)
            flags, comments = set(), []
        assert current is not None
        if keyword == "msgctxt":
            current.msgctxt, target = _unquote(rest), ("msgctxt", 0)
        elif keyword == "msgid":
            current.msgid, target = _unquote(rest), ("msgid", 0)
        elif keyword == "msgid_plural":
            current.msgid_plural, target = _unquote(rest), ("msgid_plural", 0)
        elif keyword == "msgstr":
            current.msgstr, target = [_unquote(rest)], ("msgstr", 0)
        elif keyword.startswith("msgstr["):
            index = int(keyword[7:-1])
            if index == 0:
                current.msgstr = []
            current.msgstr.append(_unquote(rest))
            target = ("msgstr", index)
        else:
            raise ValueError(f"{path}: cannot read {raw!r}")
    finish()
    header = next((e for e in entries if e.msgid == "" and e.msgctxt is None), Entry(msgid=""))
    return header, [e for e in entries if e is not header]


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    if "\n" in escaped.rstrip("\n") or len(escaped) > 70:
        parts = escaped.replace("\n", "\\n\n").split("\n")
        return '""\n' + "\n".join(f'"{p}"' for p in parts if p != "")
    return f'"{escaped.replace(chr(10), chr(92) + "n")}"'


def write_po(path: Path, header: Entry, entries: Iterable[Entry]) -> None:
    """A .po file: the header, then each entry (comments, flags, msgctxt, msgid, msgid_plural, msgstr)."""
    out: list[str] = []
    for entry in [header, *entries]:
        out.extend(entry.comments)
        if entry.flags:
            out.append("#, " + ", ".join(sorted(entry.flags)))
        if entry.msgctxt is not None:
            out.append(f"msgctxt {_quote(entry.msgctxt)}")
        out.append(f"msgid {_quote(entry.msgid)}")
        if entry.msgid_plural is not None:
            out.append(f"msgid_plural {_quote(entry.msgid_plural)}")
            out.extend(f"msgstr[{i}] {_quote(s)}" for i, s in enumerate(entry.msgstr))
        else:
            out.append(f"msgstr {_quote(entry.msgstr[0])}")
        out.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out), encoding="utf-8")


def mo_bytes(header: Entry, entries: Iterable[Entry]) -> bytes:
    """The compiled catalogue: translated, non-fuzzy entries only (as msgfmt does), keys sorted."""
    pairs: dict[bytes, bytes] = {b"": header.msgstr[0].encode()}
    for entry in entries:
        if entry.fuzzy or not entry.translated:
            continue
        msgid = entry.key if entry.msgid_plural is None else f"{entry.key}\x00{entry.msgid_plural}"
        pairs[msgid.encode()] = "\x00".join(entry.msgstr).encode()
    keys = sorted(pairs)
    count = len(keys)
    ids_start = 7 * 4
    strs_start = ids_start + count * 8
    data_start = strs_start + count * 8
    ids_table, strs_table, blob = [], [], b""
    for key in keys:
        ids_table.append((len(key), data_start + len(blob)))
        blob += key + b"\x00"
    for key in keys:
        value = pairs[key]
        strs_table.append((len(value), data_start + len(blob)))
        blob += value + b"\x00"
    out = struct.pack("<7I", 0x950412DE, 0, count, ids_start, strs_start, 0, data_start)
    out += b"".join(struct.pack("<2I", *pair) for pair in ids_table)
    out += b"".join(struct.pack("<2I", *pair) for pair in strs_table)
    return out + blob


def compile_po(po_path: Path) -> Path:
    """Write the .mo beside a .po; returns its path."""
    header, entries = read_po(po_path)
    mo_path = po_path.with_suffix(".mo")
    mo_path.write_bytes(mo_bytes(header, entries))
    return mo_path


# --- pseudo-locales -------------------------------------------------------------------------------------------

_ACCENTS = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "åƀçðéƒĝĥîĵķļɱñöþǫŕšţûṽŵẋýžÅƁÇÐÉƑĜĤÎĴĶĻṀÑÖÞǪŔŠŢÛṼŴẊÝŽ",
)
# What must pass through untouched: printf and format placeholders, HTML tags and entities, URLs.
_KEEP = re.compile(r"%\([^)]+\)[sdfr]|%[sdfr]|\{[^{}]*\}|<[^>]+>|&[#\w]+;|https?://\S+")


def pseudo_accented(text: str) -> str:
    """⟦Ŝçöŕé~~~⟧: every letter accented, ~40 % longer (German and Korean layouts run long), placeholders kept."""
    if not text:
        return text
    out, last = [], 0
    for match in _KEEP.finditer(text):
        out.append(text[last:match.start()].translate(_ACCENTS))
        out.append(match.group())
        last = match.end()
    out.append(text[last:].translate(_ACCENTS))
    padding = "~" * max(1, round(len(_KEEP.sub("", text)) * 0.4))
    return f"{PSEUDO_OPEN}{''.join(out)}{padding}{PSEUDO_CLOSE}"


def pseudo_rtl(text: str) -> str:
    """The message shown right to left (a right-to-left override around it), wrapped in ⟦…⟧; markup kept."""
    if not text:
        return text
    return f"{PSEUDO_OPEN}{RLO}{text}{PDF}{PSEUDO_CLOSE}" if not _KEEP.search(text) else f"{PSEUDO_OPEN}{text}{PSEUDO_CLOSE}"


PSEUDO_LOCALES = {PSEUDO_ACCENTED: pseudo_accented, PSEUDO_RTL: pseudo_rtl}


def pseudo_catalogue(source: Path, locale_dir: Path, code: str) -> Path:
    """The pseudo-locale `code` of the catalogue at `source` (any shipped language's .po: its msgids are the
    interface's), written as .po and .mo under `locale_dir`; returns the .mo path."""
    transform = PSEUDO_LOCALES[code]
    header, entries = read_po(source)
    header = Entry(msgid="", msgstr=[
        "Content-Type: text/plain; charset=UTF-8\nLanguage: " + code + "\nPlural-Forms: nplurals=2; plural=(n != 1);\n"
    ])
    pseudo = []
    for entry in entries:
        strings = [transform(entry.msgid)] if entry.msgid_plural is None else [
            transform(entry.msgid), transform(entry.msgid_plural)]
        pseudo.append(Entry(msgid=entry.msgid, msgid_plural=entry.msgid_plural, msgctxt=entry.msgctxt, msgstr=strings))
    folder = locale_dir / _to_locale(code) / "LC_MESSAGES"
    write_po(folder / "django.po", header, pseudo)
    return compile_po(folder / "django.po")


def _to_locale(code: str) -> str:
    language, _, region = code.partition("-")
    return f"{language}_{region.upper()}" if region else language
