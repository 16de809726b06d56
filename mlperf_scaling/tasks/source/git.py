"""Git sources: a shallow, sparse clone of a round's data, a repository's head, a remote's head."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mlperf_scaling.tasks.source.members import SourceError, refuse_option_like


class RemoteUnreachable(SourceError):
    """The remote could not be reached at all (name not resolved, connection refused or cut, no answer in time): a
    network problem, told apart from an absent repository, and not worth trying again at once."""


class RepositoryAbsent(SourceError):
    """The remote answered: there is no such repository (or it is not public)."""


# what git (through curl or ssh) says when it never reached the remote
_UNREACHABLE = ("could not resolve host", "failed to connect", "couldn't connect", "connection refused", "connection timed out",
                "network is unreachable", "no route to host", "operation timed out", "temporary failure in name resolution",
                "name or service not known", "ssl connection", "connection reset")
_ABSENT = ("repository not found", "not found", "does not appear to be a git repository", "authentication failed",
           "the requested url returned error: 404", "correct access rights")
# named in words every command can act on: `watch` has no --mirror, but `run` reads a mirror without any network
MIRROR_HINT = "without network, `mlperf-scaling run --mirror DIR --offline` reads the rounds from a folder of archives (e.g. ../shared/mlperf)"

# Folders a result repository keeps data in; the benchmark code next to them is never fetched.
# results and systems, and how each implementation was configured (tasks/parse/implementation.py): its config files,
# run scripts, YAML and READMEs, not its code
SPARSE_PATTERNS = ["/*/systems/", "/*/results/", "/v*/*/*/results/", "/v*/*/*/*/results/",
                   "/*/benchmarks/**/*.sh", "/*/benchmarks/**/*.sub", "/*/benchmarks/**/*.yaml", "/*/benchmarks/**/*.yml",
                   "/*/benchmarks/**/README*", "/*/benchmarks/**/config*.json", "/*/benchmarks/**/*.bash", "/*/benchmarks/**/*.env"]


def _run_git(args: list[str], cwd: Path | None, timeout_s: float) -> str:
    # No shell, and `--` before any user-given URL, so input can never become an option.
    # never prompt; give up on a transfer that stalls below 1 kB/s for a minute
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true",
           "GIT_HTTP_LOW_SPEED_LIMIT": "1000", "GIT_HTTP_LOW_SPEED_TIME": "60"}
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout_s, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        raise RemoteUnreachable(f"git {args[0]} did not finish within {timeout_s:.0f} s: the remote does not answer; {MIRROR_HINT}") from None
    if done.returncode != 0:
        raise classify_git_failure(args[0], done.stderr.strip())
    return done.stdout


def classify_git_failure(command: str, stderr: str) -> SourceError:
    said = stderr.lower()
    detail = stderr[-500:]
    if any(text in said for text in _UNREACHABLE):
        return RemoteUnreachable(f"git {command} failed: cannot reach the remote ({detail.splitlines()[-1] if detail else 'no answer'}); {MIRROR_HINT}")
    if any(text in said for text in _ABSENT):
        return RepositoryAbsent(f"git {command} failed: no such repository ({detail.splitlines()[-1] if detail else ''})")
    return SourceError(f"git {command} failed: {detail}")


def git_head(repo: Path) -> str:
    return _run_git(["rev-parse", "HEAD"], repo, 60).strip()


def clone_sparse(url: str, target: Path, timeout_s: float = 900) -> None:
    """Shallow, sparse clone holding systems/ and results/ folders and the implementations' configuration files."""
    refuse_option_like(url, "git URL")
    _run_git(["clone", "--depth", "1", "--filter=blob:none", "--no-checkout", "--", url, str(target)], None, timeout_s)
    _run_git(["sparse-checkout", "set", "--no-cone", *SPARSE_PATTERNS], target, 120)
    _run_git(["checkout"], target, timeout_s)


def remote_head(url: str, timeout_s: float = 60) -> str:
    """The commit a remote's HEAD points at, without cloning."""
    refuse_option_like(url, "git URL")
    out = _run_git(["ls-remote", "--", url, "HEAD"], None, timeout_s)
    if not out.strip():
        raise SourceError(f"remote has no HEAD: {url}")
    return out.split()[0]
