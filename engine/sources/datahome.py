"""The data home: where lexprobe keeps the datasets it reads (BATS, Google, SemCor, WSD evaluation, STREUSLE).

``$LEXPROBE_DATA``, else ``~/.local/share/lexprobe/data`` (``$XDG_DATA_HOME/lexprobe/data``): data belongs to
the user, not to a clone, and never lies inside a repository. Each dataset has its own folder
``<data home>/<name>/`` holding the release as unpacked, plus ``FETCH.json``: where it came from (URL or local
path), how (download, copy, unpack), when, and a SHA-256 over every file of the dataset's root folder
(relative path and content, :func:`tree_checksum`): a fetched copy and its source folder have the same checksum.

``fetch(name)`` downloads the official release and unpacks it; ``fetch(name, from_path=PATH)`` takes a local
copy instead (a folder, an archive, or the dataset's single file). Local files are *copied* (reflinked where the
filesystem can: no extra space), never hard-linked, so that editing the source later cannot change the fetched
set behind its checksum. What is fetched is read with the reader that will use it (:func:`check_parses`) and
refused when it does not parse. The new folder is built under a hidden name, under the dataset's lock
(``.NAME.lock``, as index writes), and swapped in atomically, so a failed fetch leaves the old dataset (or none);
the next fetch removes what a killed one left. ``data list`` hashes a set again when a file's size or time has
changed since the fetch and says ``modified`` when its content has.

A dataset is found by a marker file or folder (e.g. ``ALL/ALL.data.xml`` for the WSD evaluation sets) up to three
levels below a folder, so the official archives' own layouts and the flat ``../shared/data`` layout both work.

Unpacking is bounded: an archive may hold at most ``$LEXPROBE_MAX_MEMBERS`` members (default 100,000) and
unpack to at most ``$LEXPROBE_MAX_UNPACK`` bytes (default: 1 GiB, or 100 times the archive's size when that is
more, so a small archive cannot fill a disk), checked on the archive's own list before anything is written. Only a
folder or a regular file is taken with ``--from`` (a FIFO would block the fetch for ever). A write that fails (a
full disk) is one line naming the data home.
"""

from __future__ import annotations

import hashlib
import importlib.util
import fcntl
import json
import lzma
import os
import shutil
import tarfile
import time
import uuid
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..core.errors import InputError, LexprobeError
from ..core.progress import bar
from ..core.store import _swap_in, write_lock
from .vectors import env_limit, regular_file

RECORD = "FETCH.json"
_CHUNK = 1 << 22
MAX_MEMBERS = ("LEXPROBE_MAX_MEMBERS", 100_000)
MAX_UNPACK = "LEXPROBE_MAX_UNPACK"
MAX_TREE_BYTES = ("LEXPROBE_MAX_TREE_BYTES", 64 << 30)
UNPACK_FLOOR, UNPACK_RATIO = 1 << 30, 100


@dataclass(frozen=True)
class Dataset:
    """One dataset lexprobe knows: its official release and how to recognise it once unpacked."""

    name: str
    title: str
    url: str                 # the official release (an archive, or the single file for ``google``)
    marker: str              # a path that exists under the dataset's root folder
    entry: str = ""          # what readers get, relative to the root ("" = the root folder itself)
    licence: str = ""

    def entry_path(self, root: Path) -> Path:
        return root / self.entry if self.entry else root


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("bats", "Bigger Analogy Test Set 3.0 (Gladkova et al. 2016)",
            "https://vecto.space/files/BATS_3.0.zip", "1_Inflectional_morphology", licence="unspecified; cite"),
    Dataset("google", "Google analogy questions (Mikolov et al. 2013)",
            "https://raw.githubusercontent.com/tmikolov/word2vec/master/questions-words.txt",
            "questions-words.txt", entry="questions-words.txt", licence="Apache-2.0"),
    Dataset("semcor", "SemCor 3.0 in the WSD framework format (Raganato et al. 2017)",
            "http://lcl.uniroma1.it/wsdeval/data/WSD_Training_Corpora.zip", "semcor.data.xml",
            licence="WordNet licence"),
    Dataset("wsd-eval", "WSD evaluation sets: senseval2/3, semeval2007/2013/2015, ALL (Raganato et al. 2017)",
            "http://lcl.uniroma1.it/wsdeval/data/WSD_Evaluation_Framework.zip", "ALL/ALL.data.xml",
            licence="research use; cite the task papers"),
    Dataset("streusle", "STREUSLE 4.7.1 (Schneider et al.): SNACS supersenses",
            "https://github.com/nert-nlp/streusle/archive/refs/tags/v4.7.1.zip",
            "test/streusle.ud_test.conllulex", licence="CC BY-SA 4.0"),
    # word similarity (lexprobe.sources.datasets.word_pairs reads each released file)
    Dataset("wordsim353", "WordSim-353 (Finkelstein et al. 2002)",
            "http://www.cs.technion.ac.il/~gabr/resources/data/wordsim353/wordsim353.zip", "combined.tab",
            entry="combined.tab", licence="unspecified; cite"),
    Dataset("simlex999", "SimLex-999 (Hill et al. 2015)", "https://fh295.github.io/SimLex-999.zip",
            "SimLex-999.txt", entry="SimLex-999.txt", licence="unspecified; cite"),
    Dataset("men", "MEN Test Collection (Bruni et al. 2014), natural form",
            "https://staff.fnwi.uva.nl/e.bruni/resources/MEN/MEN.tar.gz", "MEN_dataset_natural_form_full",
            entry="MEN_dataset_natural_form_full", licence="CC BY 3.0"),
    Dataset("rw", "Stanford Rare Words (Luong et al. 2013)", "https://nlp.stanford.edu/~lmthang/morphoNLM/rw.zip",
            "rw.txt", entry="rw.txt", licence="unspecified; cite"),
)}

# The copies gensim ships in its test data (whole sets): what a new machine runs without fetching anything.
GENSIM_COPIES = {"google": "questions-words.txt", "wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}


def data_home() -> Path:
    """``$LEXPROBE_DATA``, else ``$XDG_DATA_HOME/lexprobe/data`` (default ``~/.local/share/lexprobe/data``)."""
    if os.environ.get("LEXPROBE_DATA"):
        return Path(os.environ["LEXPROBE_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "lexprobe" / "data"


def shared_data() -> Path:
    """``../shared/data`` beside the repository (the datasets as they lie on the development machines)."""
    return Path(__file__).resolve().parents[3] / "shared" / "data"


def packaged_copy(name: str) -> tuple[Path, str] | None:
    """A copy shipped inside an installed package, and which: gensim's test data holds the Google set, WordSim-353
    and SimLex-999 (:data:`GENSIM_COPIES`); None without gensim or such a copy."""
    spec = importlib.util.find_spec("gensim")
    if name not in GENSIM_COPIES or spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "test" / "test_data" / GENSIM_COPIES[name]
    if not path.is_file():
        return None
    from importlib.metadata import version

    return path, f"gensim=={version('gensim')} (test data)"


def dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise LexprobeError(f"unknown dataset {name!r} (choose from {', '.join(DATASETS)})") from None


def fetch_hint(name: str) -> str:
    return f"run `lexprobe data fetch {name}` (or `lexprobe data fetch {name} --from PATH` with a local copy)"


# ------------------------------------------------------------------------------------------- finding


def find_root(base: Path, ds: Dataset, depth: int = 3) -> Path | None:
    """The folder under ``base`` (``base`` itself or up to ``depth`` levels down) that holds ``ds.marker``."""
    if not base.is_dir():
        return None
    pattern = ds.marker
    for level in range(depth + 1):
        hits = sorted(p for p in base.glob("/".join(["*"] * level + [pattern])) if not _hidden(p, base))
        if hits:
            root = hits[0]
            for _ in Path(pattern).parts:
                root = root.parent
            return root
    return None


def _hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)


def read_record(name: str, home: Path | None = None) -> dict | None:
    """The fetch record of ``name`` in the data home, or None when it was never fetched."""
    path = (home or data_home()) / name / RECORD
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"unreadable fetch record ({exc}); fetch the dataset again") from None


def locate(name: str, home: Path | None = None) -> Path:
    """Path readers take for dataset ``name`` in the data home; a clear error saying which fetch to run."""
    ds = dataset(name)
    home = home or data_home()
    root = find_root(home / name, ds)
    if root is None:
        raise LexprobeError(f"dataset {name!r} is not in the data home {home}: {fetch_hint(name)}")
    return ds.entry_path(root)


def find(name: str, places: list[Path]) -> tuple[Path, Path] | None:
    """First of ``places`` (data homes, or folders holding datasets side by side) that has ``name``:
    ``(entry path for readers, dataset root)``, or None."""
    ds = dataset(name)
    for place in places:
        root = find_root(place / name, ds) or find_root(place, ds)
        if root is not None:
            return ds.entry_path(root), root
    return None


def find_or_packaged(name: str, places: list[Path]) -> Path | None:
    """The entry path readers take of dataset ``name``: from the first of ``places`` that has it (:func:`find`),
    else gensim's copy (:func:`packaged_copy`); None when neither has it."""
    hit = find(name, places) or packaged_copy(name)
    return None if hit is None else hit[0]

# How a dataset of the data home is read: the reader kind of its spec and the entry below its root folder.
SPEC_KINDS = {"bats": ("bats", ""), "google": ("google", ""), "semcor": ("wsd", ""), "wsd-eval": ("wsd", "ALL"),
              "streusle": ("streusle", "")}


def named_spec(name: str) -> str:
    """``KIND:PATH`` for a dataset named only by its name (``bats`` -> ``bats:<data home>/bats/BATS_3.0``): the
    data home first, then ``../shared/data`` beside the repository; a clear error saying which fetch to run."""
    kind, sub = SPEC_KINDS[name]
    hit = find(name, [data_home(), shared_data()])
    if hit is None:
        raise LexprobeError(f"dataset {name!r} is not in the data home {data_home()}: {fetch_hint(name)}")
    return f"{kind}:{hit[0] / sub if sub else hit[0]}"


def dataset_path(path: str | os.PathLike) -> Path:
    """A dataset's path as given, or, when that does not exist and is relative, the first place it exists under:
    the checkout (paths written from the repository root, ``../shared/data/...``), then the data home and
    ``../shared/data`` (a path within them, ``BATS_3.0/...``). A notebook in another folder reads the same
    dataset as the CLI run from the checkout. Unchanged when no place has it (the reader names it)."""
    given = Path(path).expanduser()
    if given.exists() or given.is_absolute():
        return given
    checkout = Path(__file__).resolve().parents[2]
    for base in (checkout, data_home(), shared_data()):
        if (base / given).exists():
            return (base / given).resolve()
    return given


def resolve_path(spec: str) -> Path | None:
    """The file or folder a dataset spec reads (``KIND:PATH``, a plain path, or a dataset name), or None."""
    kind, sep, rest = spec.partition(":")
    if not sep and spec in SPEC_KINDS:
        try:
            return resolve_path(named_spec(spec))
        except LexprobeError:
            return None
    for candidate in ([rest] if sep else []) + [spec]:
        if candidate and Path(candidate).exists():
            return Path(candidate)
    return None


# ------------------------------------------------------------------------------------------ checksum


def _files(root: Path) -> Iterator[Path]:
    """Every regular file under ``root`` (the fetch record itself left out)."""
    for dirpath, _, filenames in os.walk(root):
        for fn in filenames:
            path = Path(dirpath) / fn
            if not (path.parent == root and fn == RECORD):
                yield path


def file_sha256(path: Path) -> tuple[bytes, int]:
    """(SHA-256 digest, size in bytes) of one file, read in 4 MiB chunks."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.digest(), size


def tree_files(root: Path) -> list[Path]:
    """The files :func:`tree_checksum` reads, sorted by relative path, checked before any is opened: regular files
    only (a FIFO, socket or device, or a link to one, is refused by name: it would block or never end), at most
    ``$LEXPROBE_MAX_MEMBERS`` files and ``$LEXPROBE_MAX_TREE_BYTES`` bytes (default 64 GiB) in all."""
    if not Path(root).is_dir():
        return [regular_file(Path(root))]
    most, cap = env_limit(*MAX_MEMBERS), env_limit(*MAX_TREE_BYTES)
    paths, total = [], 0
    for path in _files(root):
        total += regular_file(path).stat().st_size
        paths.append(path)
        if len(paths) > most:
            raise InputError(root, f"more than {most} files in this folder ({MAX_MEMBERS[0]}=N raises the limit)")
        if total > cap:
            raise InputError(root, f"more than {cap} bytes in this folder ({MAX_TREE_BYTES[0]}=BYTES raises the "
                                   "limit)")
    return sorted(paths, key=lambda p: p.relative_to(root).as_posix())


def tree_checksum(root: Path) -> dict:
    """SHA-256 over (relative path, NUL, file SHA-256) of every file, sorted; plus file and byte counts. The
    files are checked first (:func:`tree_files`).

    A single file (e.g. ``questions-words.txt``) is hashed the same way with its own name as the path.
    """
    tree = hashlib.sha256()
    files = n_bytes = 0
    for path in tree_files(root):
        digest, size = file_sha256(path)
        n_bytes += size
        rel = path.name if path == root else path.relative_to(root).as_posix()
        tree.update(rel.encode() + b"\0" + digest)
        files += 1
    return {"sha256": tree.hexdigest(), "files": files, "bytes": n_bytes}


# ------------------------------------------------------------------------------------------- fetching


_FICLONE = 0x40049409  # Linux's ioctl that shares a file's blocks copy-on-write (btrfs, XFS)


def _copy(src: str, dst: str) -> str:
    """A copy of ``src`` at ``dst`` (with its times), never a hard link: editing the source later must not change
    the fetched set. A reflink (copy-on-write, no extra space) where the filesystem offers one."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        try:
            fcntl.ioctl(fout.fileno(), _FICLONE, fin.fileno())
        except OSError:
            shutil.copyfileobj(fin, fout, _CHUNK)
    shutil.copystat(src, dst)
    return dst


def _check_members(archive: Path, sizes: list[int]) -> None:
    """Refuse an archive of more members, or more unpacked bytes, than the limits (see the module's docstring)."""
    most = env_limit(*MAX_MEMBERS)
    if len(sizes) > most:
        raise InputError(archive, f"{len(sizes)} archive members, more than {most} ({MAX_MEMBERS[0]} raises the "
                         "limit)")
    cap = env_limit(MAX_UNPACK, max(UNPACK_FLOOR, UNPACK_RATIO * archive.stat().st_size))
    total = sum(max(0, s) for s in sizes)
    if total > cap:
        raise InputError(archive, f"unpacks to {total} bytes, more than {cap} (a bomb, or a larger release than "
                         f"expected: {MAX_UNPACK}=BYTES raises the limit)")


def _unpack(archive: Path, into: Path) -> None:
    """Unpack a zip or tar archive; member paths that would leave ``into`` are refused, and so are archives past
    the member and size limits (checked on the archive's list before anything is written)."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                infos = zf.infolist()
                _check_members(archive, [i.file_size for i in infos])
                for member in (i.filename for i in infos):
                    target = (into / member).resolve()
                    if not target.is_relative_to(into.resolve()):
                        raise InputError(archive, f"archive member {member!r} points outside the folder")
                zf.extractall(into)  # each member stops at its listed size (a longer one fails its CRC)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                members = []
                for member in tf:  # one at a time: a list past the limit is refused before it is all read
                    members.append(member)
                    if len(members) > env_limit(*MAX_MEMBERS):
                        break
                _check_members(archive, [m.size for m in members])
                tf.extractall(into, members=members, filter="data")
        else:
            raise InputError(archive, "not a zip or tar archive")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise InputError(archive, f"damaged archive ({exc})") from None


def _download(url: str, target: Path, name: str) -> None:
    """Stream ``url`` to ``target`` with a progress bar; any network failure is one clear error line."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(target, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with bar(total=total, desc=f"download {target.name}", unit="B", unit_scale=True) as progress:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
                    progress.update(len(chunk))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        target.unlink(missing_ok=True)
        reason = getattr(exc, "reason", None) or exc
        raise LexprobeError(f"{url}: download failed ({reason}); with a local copy use "
                            f"`lexprobe data fetch {name} --from PATH`") from None


def _copy_tree(root: Path, target: Path) -> list[str]:
    """Copy (:func:`_copy`) every regular file under ``root`` into ``target``; links are never followed out of
    the tree: a link to a folder is skipped (two links to ``..`` made 764k files), a link to a file is taken
    only when the file lies inside ``root``. Returns the skipped links and odd entries (relative paths)."""
    top = root.resolve()
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):  # os.walk does not descend into links to folders
        here = Path(dirpath)
        rel = here.relative_to(root)
        (target / rel).mkdir(parents=True, exist_ok=True)
        skipped += [(rel / d).as_posix() for d in dirnames if (here / d).is_symlink()]
        for fn in filenames:
            path = here / fn
            real = path.resolve()
            if not real.is_file() or (path.is_symlink() and not real.is_relative_to(top)):
                skipped.append((rel / fn).as_posix())
                continue
            _copy(str(real), str(target / rel / fn))
    return sorted(skipped)


def _place(source: Path, into: Path, ds: Dataset, skipped: list[str] | None = None) -> str:
    """Put a local folder, archive or single file into the empty folder ``into``; returns the method used.
    Links a folder copy leaves out are appended to ``skipped``."""
    if source.is_dir():
        root = find_root(source, ds)
        if root is None:
            raise InputError(source, f"does not hold the {ds.name} dataset (no {ds.marker} inside)")
        left_out = _copy_tree(root, into / root.name)
        if skipped is not None:
            skipped += left_out
        return "copy"
    regular_file(source)  # a FIFO or a device would block the fetch or never end
    if zipfile.is_zipfile(source) or tarfile.is_tarfile(source):
        _unpack(source, into)
        return "unpack"
    if source.name == Path(ds.marker).name:
        _copy(str(source), str(into / source.name))
        return "copy"
    raise InputError(source, f"not a folder, an archive or {Path(ds.marker).name}")


def fetch(name: str, from_path: str | os.PathLike | None = None, home: Path | None = None) -> dict:
    """Fetch dataset ``name`` into the data home (download, or ``from_path``); returns the fetch record."""
    ds = dataset(name)
    home = home or data_home()
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LexprobeError(f"{home}: cannot make the data home ({exc.strerror or exc})") from None
    with write_lock(home, name):  # one fetch of a name at a time; a killed fetch's temporary folder is removed
        return _fetch(ds, from_path, home)


def _fetch(ds: Dataset, from_path, home: Path) -> dict:
    name = ds.name
    final = home / name
    tmp = home / f".{name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    extra: dict = {}
    try:
        if from_path is not None:
            source = Path(from_path).expanduser().resolve()
            if not source.exists():
                raise InputError(source, "no such file or folder")
            skipped: list[str] = []
            method = _place(source, tmp, ds, skipped)
            origin = source.as_uri()
            if skipped:
                extra["skipped_links"] = skipped
        else:
            downloads = home / ".downloads"
            downloads.mkdir(exist_ok=True)
            archive = downloads / Path(ds.url.split("?")[0]).name
            _download(ds.url, archive, name)
            method, origin = "download", ds.url
            extra["archive_sha256"] = file_sha256(archive)[0].hex()
            try:
                _place(archive, tmp, ds)
            finally:
                archive.unlink(missing_ok=True)
        root = find_root(tmp, ds)
        if root is None:
            raise LexprobeError(f"{origin}: unpacked, but no {ds.marker} inside: not the {name} dataset")
        check_parses(name, root, shown=(tmp, final))
        record = {"name": name, "title": ds.title, "source": origin, "official_url": ds.url, "method": method,
                  "fetched": time.strftime("%Y-%m-%dT%H:%M:%S"), "root": root.relative_to(tmp).as_posix(),
                  "licence": ds.licence, **extra, **tree_checksum(root), "stamp": tree_stamp(root)}
        (tmp / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        _swap_in(tmp, final)
    except OSError as exc:  # a full disk names no file by itself
        where = f" ({exc.filename})" if exc.filename else ""
        raise LexprobeError(f"{final}: cannot write the dataset into the data home{where}: "
                            f"{exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return record


def check_parses(name: str, root: Path, shown: tuple[Path, Path] | None = None) -> None:
    """Read dataset ``name`` under ``root`` with the reader that will use it (BATS, the Google questions, the WSD
    XML and keys, STREUSLE, a word-similarity set): what does not parse is refused in one line, so random bytes
    under a released file's name never reach a run. ``shown``: (temporary folder, the name to show for it)."""
    from .datasets.bats import read_bats
    from .datasets.google import read_questions
    from .datasets.streusle import read_streusle
    from .datasets.word_pairs import read_word_pairs
    from .datasets.wsd import read_wsd

    entry = dataset(name).entry_path(root)
    kind, sub = SPEC_KINDS.get(name, ("pairs", ""))
    reader = {"bats": read_bats, "google": read_questions, "wsd": read_wsd, "streusle": read_streusle,
              "pairs": read_word_pairs}[kind]
    try:
        reader(entry / sub if sub else entry)
    except LexprobeError as exc:
        message = str(exc) if shown is None else str(exc).replace(str(shown[0]), str(shown[1]))
        raise LexprobeError(f"not the {name} dataset as its reader reads it: {message}") from None


def tree_stamp(root: Path) -> str:
    """A quick fingerprint of a tree (each file's relative path, size and modification time, no content): when
    it differs from the one recorded at fetch time, the files are hashed again (:func:`list_datasets`)."""
    digest = hashlib.sha256()
    for path in tree_files(root):
        st = path.stat()
        rel = path.name if path == root else path.relative_to(root).as_posix()
        digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def list_datasets(home: Path | None = None, *, verify: bool = False) -> list[dict]:
    """One row per known dataset: status (``ok``, ``missing``, ``modified``: its files differ from what was fetched,
    hashed again whenever a file's size or time changed, or always with ``verify``), path, source, checksum."""
    home = home or data_home()
    rows = []
    for name, ds in DATASETS.items():
        record = read_record(name, home)
        root = find_root(home / name, ds)
        if root is None:
            rows.append({"name": name, "status": "missing", "path": "", "source": "", "sha256": "", "files": None,
                         "fetched": "", "hint": f"lexprobe data fetch {name}"})
            continue
        status = "ok" if record else "no record"
        if record and (verify or record.get("stamp") != tree_stamp(root)):
            status = "ok" if tree_checksum(root)["sha256"] == record.get("sha256") else "modified"
        rows.append({"name": name, "status": status, "path": str(ds.entry_path(root)),
                     "source": (record or {}).get("source", ""), "sha256": (record or {}).get("sha256", "")[:16],
                     "files": (record or {}).get("files"), "fetched": (record or {}).get("fetched", ""), "hint": ""})
    return rows
