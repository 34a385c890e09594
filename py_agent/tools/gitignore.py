"""Which workspace paths ``grep`` and ``find`` skip: ``.gitignore`` rules, as ripgrep and fd apply them.

pi's ``grep`` runs ripgrep and its ``find`` runs fd; both honour the ``.gitignore`` files of the
searched tree (the root's and nested ones, each read relative to its own folder, a deeper file's
rules winning over a shallower one's; ``!`` re-includes; a file under an ignored folder stays
ignored) and ``.ignore`` files (read after ``.gitignore``, so their rules win). The patterns are
git's, matched by ``pathspec``'s :class:`~pathspec.GitIgnoreSpec`. ``.git/`` is always skipped:
ripgrep's ``--hidden`` (pi's flag) would read the repository's history, which is noise.

Unlike ripgrep, the rules apply whether or not the workspace holds a ``.git`` folder (a folder the
user opens in the page is read without its ``.git/``, and an upload has none): fd in pi's
``find`` does the same (``--no-require-git`` outside repositories).
"""

from __future__ import annotations

from collections.abc import Iterable

from pathspec import GitIgnoreSpec

from .workspace import Workspace

__all__ = ["IGNORE_FILE_NAMES", "IgnoreRules"]

IGNORE_FILE_NAMES = (".gitignore", ".ignore")
"""Read in this order in each folder (later rules win)."""
ALWAYS_SKIPPED = ".git"


class IgnoreRules:
    """The ignore files of a workspace, asked whether a path is skipped."""

    def __init__(self, sources: Iterable[tuple[str, str]]) -> None:
        """``sources``: ``(path of an ignore file, its text)``, in :data:`IGNORE_FILE_NAMES` order per folder."""
        lines: dict[str, list[str]] = {}
        for path, text in sources:
            folder = path.rpartition("/")[0]
            lines.setdefault(folder, []).extend(text.splitlines())
        self._specs = {folder: GitIgnoreSpec.from_lines(found) for folder, found in lines.items()}
        self._folders: dict[str, bool] = {}

    @classmethod
    def of(cls, workspace: Workspace) -> IgnoreRules:
        """The rules of every ignore file in ``workspace`` (binary ones are skipped)."""
        sources: list[tuple[str, str]] = []
        for file in workspace.files():
            if file.name in IGNORE_FILE_NAMES and not _in_git(file.path):
                text = file.text()
                if text is not None:
                    sources.append((file.path, text))
        sources.sort(key=lambda source: (source[0].rpartition("/")[0], IGNORE_FILE_NAMES.index(_name(source[0]))))
        return cls(sources)

    def _own(self, path: str, is_dir: bool, top: int = 0) -> bool:
        """Whether the rules of the folders above ``path`` (down from depth ``top``) ignore it (its
        folders not looked at)."""
        if _name(path) == ALWAYS_SKIPPED:
            return True
        parts = path.split("/")
        for depth in range(len(parts) - 1, top - 1, -1):  # the deepest ignore file with a matching rule decides
            folder = "/".join(parts[:depth])
            spec = self._specs.get(folder)
            if spec is None:
                continue
            relative = "/".join(parts[depth:]) + ("/" if is_dir else "")
            result = spec.check_file(relative)
            if result.include is not None:
                return bool(result.include)
        return False

    def _folder_ignored(self, folder: str) -> bool:
        known = self._folders.get(folder)
        if known is None:
            known = self._folders[folder] = self._own(folder, True)
        return known

    def ignored(self, path: str, *, is_dir: bool = False, below: str = "") -> bool:
        """Whether ``path`` (a workspace path) is skipped by a search of the folder ``below``: it,
        or a folder between ``below`` and it, is ignored (``below`` itself was asked for)."""
        parts = path.split("/")
        start = len(below.split("/")) if below else 0
        if below and self.ignored(below, is_dir=True):
            # ripgrep searches an ignored folder asked for by name; the rules above it, which a
            # pattern naming the folder would carry to all it holds, are then not applied.
            return any(self._own("/".join(parts[:d]), True, start) for d in range(start + 1, len(parts))) or (
                self._own(path, is_dir, start)
            )
        for depth in range(start + 1, len(parts)):
            if self._folder_ignored("/".join(parts[:depth])):
                return True
        return self._folder_ignored(path) if is_dir else self._own(path, False)


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def _in_git(path: str) -> bool:
    return ALWAYS_SKIPPED in path.split("/")
