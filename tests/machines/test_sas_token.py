"""The SAS bridge's device token (machines.sasbridge.bridge): ``--token-file`` (a file readable by its owner
only, refused otherwise as ssh refuses a private key others can read) or ``--token`` (tests, development),
one of them and not both. The refusals are checked on the bridge as a process (its exit status and the
message an installer reads); the token a good file holds, through the bridge's own argument parser. No
Django."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from machines.sasbridge.bridge import TokenFileError, parse, read_token_file

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "-tok3n_with-a-dash"  # a token may start with "-": in a file it needs no care
REST = ["--line", "fd:0", "--denom-cents", "20", "--hall", "ws://127.0.0.1:1", "--asset", "A-1"]


def token_file(folder: Path, mode: int, text: str = TOKEN + "\n") -> Path:
    path = folder / "token"
    path.write_text(text)
    path.chmod(mode)
    return path


def bridge(*args: str, journal: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "machines.sasbridge.bridge", *REST, "--journal", str(journal), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_token_file_of_its_owner_only_gives_the_token(tmp_path: Path) -> None:
    path = token_file(tmp_path, 0o600)
    args = parse([*REST, "--journal", "j", "--token-file", str(path)])
    assert args.token == TOKEN
    assert parse([*REST, "--journal", "j", "--token-file", str(token_file(tmp_path, 0o400))]).token == TOKEN
    assert parse([*REST, "--journal", "j", f"--token={TOKEN}"]).token == TOKEN  # tests and development


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_a_token_file_others_can_reach_is_refused_by_the_bridge(tmp_path: Path, mode: int) -> None:
    path = token_file(tmp_path, mode)
    done = bridge("--token-file", str(path), journal=tmp_path / "journal.sqlite3")
    assert done.returncode == 2, done.stderr
    assert f"permissions {mode:04o} for the token file" in done.stderr
    assert "too open" in done.stderr and f"chmod 600 '{path}'" in done.stderr
    assert TOKEN not in done.stderr + done.stdout
    assert not (tmp_path / "journal.sqlite3").exists()  # refused before anything was opened


def test_one_way_to_give_the_token_and_only_one(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    path = token_file(tmp_path, 0o600)
    both = bridge("--token-file", str(path), "--token=x", journal=journal)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr, both.stderr
    neither = bridge(journal=journal)
    assert neither.returncode == 2, neither.stderr
    assert "one of the arguments --token-file --token is required" in neither.stderr


def test_token_files_that_are_not_a_token(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="cannot open"):
        read_token_file(str(tmp_path / "missing"))
    with pytest.raises(TokenFileError, match="not a regular file"):
        read_token_file(str(tmp_path))
    with pytest.raises(TokenFileError, match="the token alone"):
        read_token_file(str(token_file(tmp_path, 0o600, "\n")))
    with pytest.raises(TokenFileError, match="the token alone"):
        read_token_file(str(token_file(tmp_path, 0o600, "two words\n")))
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe")
    binary.chmod(0o600)
    with pytest.raises(TokenFileError, match="UTF-8"):
        read_token_file(str(binary))
