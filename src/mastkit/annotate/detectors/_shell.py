"""Shell commands parsed with :mod:`shlex`, so detectors compare structure, not keywords.

A command line is cut into simple commands at ``&&``, ``||``, ``;``, ``|`` and newlines. Each
simple command loses what does not change what it does: environment assignments (``FOO=1``),
wrappers (``sudo``, ``env``, ``time``, ``nohup``, ``timeout 30``), redirections to
``/dev/null`` and file-descriptor duplications (``2>&1``), heredoc bodies. What is left is a
program and its arguments; output redirected into a file is kept as a write.

Then three questions can be answered structurally: does it change state (``sed -i``,
``kubectl apply``, ``> file``), is it a check (a test runner, a probe, a read), and what is
its *head* (``kubectl logs``, ``pytest``) for "same command" comparisons. ``cd X`` and
``export`` segments are navigation: they never make two commands differ.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import lru_cache

_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "|&", "(", ")", ";;"})
_OUT_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_IN_REDIRECTS = frozenset({"<", "<<", "<<<", "<<-"})

_NULL_REDIRECT = re.compile(r"(?:(?<![\w/])\d|&)?>>?\s*/dev/(?:null|stdout|stderr|tty)\b")
_FD_DUP = re.compile(r"(?<![\w/])\d*[<>]&\d+|(?<![\w/])\d*[<>]&-")
_FD_PREFIX = re.compile(r"(?<=[\s;&|(])\d(?=>)")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1([^\n]*)\n.*?\n\s*\2[ \t]*(?=\n|$)", re.S)
_ENV_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")

_WRAPPERS = frozenset(
    {"sudo", "env", "time", "nohup", "nice", "timeout", "exec", "command", "stdbuf", "doas"}
)
_WRAPPER_ARG_FLAGS = frozenset({"-u", "-g", "-n", "-s", "-k", "--signal", "-o", "-e", "-i", "-C"})
NAVIGATION = frozenset({"cd", "pushd", "popd", "export", "source", ".", "set", "true", ":", "unset", "alias"})

# Programs that are only a multiplexer: their sub-command says what they do.
_MULTI = frozenset(
    {
        "kubectl", "oc", "git", "docker", "podman", "npm", "yarn", "pnpm", "helm", "systemctl", "service",
        "aws", "gcloud", "az", "cargo", "go", "make", "pip", "pip3", "uv", "poetry", "terraform", "apt",
        "apt-get", "brew", "conda", "gh", "npx", "dotnet", "mvn", "gradle", "bundle", "composer",
    }
)  # fmt: skip
# Global flags of multiplexers that take a value (so the value is not the sub-command).
_VALUE_FLAGS = frozenset(
    {"-n", "--namespace", "--context", "--kubeconfig", "-C", "-c", "--project", "--region", "--profile",
     "-f", "--file", "-p", "--prefix", "-m"}
)  # fmt: skip


@dataclass(frozen=True)
class SimpleCommand:
    """One program with its arguments, wrappers and noise removed."""

    argv: tuple[str, ...]
    writes_to: tuple[str, ...] = ()
    """Files its output is redirected into (``> out.txt``), ``/dev/null`` excluded."""

    @property
    def program(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1].lower() if self.argv else ""

    @property
    def sub(self) -> str:
        """The sub-command of a multiplexer (``logs`` in ``kubectl -n x logs pod``), else ``""``."""
        if self.program not in _MULTI:
            return ""
        args = self.argv[1:]
        i = 0
        while i < len(args):
            a = args[i]
            if a in _VALUE_FLAGS:
                i += 2
                continue
            if a.startswith("-"):
                i += 1
                continue
            return a.lower()
        return ""

    @property
    def head(self) -> str:
        """What the command does, for comparisons: ``kubectl logs``, ``pytest``, ``python -m pytest``."""
        prog = self.program
        if prog in ("python", "python3") and len(self.argv) > 2 and self.argv[1] == "-m":
            return f"{prog} -m {self.argv[2]}"
        sub = self.sub
        return f"{prog} {sub}" if sub else prog


def _strip_noise(text: str) -> str:
    text = _HEREDOC.sub(lambda m: f"<<{m.group(2)}{m.group(3)}", text)
    text = text.replace("\\\n", " ")
    text = _NULL_REDIRECT.sub(" ", text)
    text = _FD_DUP.sub(" ", text)
    return _FD_PREFIX.sub("", text)


def _newlines_to_semicolons(text: str) -> str:
    """Newlines outside quotes end a command."""
    out: list[str] = []
    quote: str | None = None
    for ch in text:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "\n":
            out.append(" ; ")
            continue
        out.append(ch)
    return "".join(out)


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to words
        return re.findall(r"&&|\|\||[;|]|>>|>|<|[^\s;|&<>]+", text)


_KEYWORDS = frozenset({"do", "then", "else", "elif", "if", "while", "until", "!", "{"})
_BLOCK_HEADS = frozenset({"for", "select", "case", "done", "fi", "esac", "}", "function"})


def _unwrap(argv: list[str]) -> list[str]:
    """Drop environment assignments, shell keywords (``do``, ``then``) and wrappers
    (``sudo -u x``, ``timeout 30``, ``env A=1``); a loop header (``for f in ...``) is nothing."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in _KEYWORDS:
            i += 1
            continue
        if word in _BLOCK_HEADS:
            return []
        if _ENV_ASSIGN.match(word):
            i += 1
            continue
        name = word.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            i += 1
            while i < len(argv) and (argv[i].startswith("-") or _ENV_ASSIGN.match(argv[i])):
                i += 2 if argv[i] in _WRAPPER_ARG_FLAGS else 1
            if name == "timeout" and i < len(argv) and re.fullmatch(r"[\d.]+[smhd]?", argv[i]):
                i += 1
            if name == "nice" and i < len(argv) and re.fullmatch(r"-?\d+", argv[i]):
                i += 1
            continue
        break
    return argv[i:]


@lru_cache(maxsize=4096)
def parse_command(text: str) -> tuple[SimpleCommand, ...]:
    """The simple commands of a command line, in order (``bash -c '...'`` is opened)."""
    tokens = _tokens(_newlines_to_semicolons(_strip_noise(text)))
    commands: list[SimpleCommand] = []
    argv: list[str] = []
    writes: list[str] = []
    skip_next: str | None = None

    def flush() -> None:
        words = _unwrap(argv)
        if words:
            prog = words[0].rsplit("/", 1)[-1]
            if prog in ("bash", "sh", "zsh") and len(words) >= 3 and words[1] in ("-c", "-lc", "-ec"):
                commands.extend(parse_command(words[2]))
            else:
                commands.append(SimpleCommand(tuple(words), tuple(writes)))
        argv.clear()
        writes.clear()

    for tok in tokens:
        if skip_next is not None:
            if skip_next == "out":
                writes.append(tok)
            skip_next = None
            continue
        if tok in _OPERATORS:
            flush()
        elif tok in _OUT_REDIRECTS:
            skip_next = "out"
        elif tok in _IN_REDIRECTS:
            skip_next = "in"
        else:
            argv.append(tok)
    flush()
    return tuple(commands)


def acting(commands: tuple[SimpleCommand, ...]) -> list[SimpleCommand]:
    """The commands that do something (``cd``/``export`` and the like left out)."""
    return [c for c in commands if c.program not in NAVIGATION]


def heads(text: str) -> set[str]:
    """Heads of the acting commands of a command line."""
    return {c.head for c in acting(parse_command(text))}


# -- classification -----------------------------------------------------------------------------

_ALWAYS_WRITE = frozenset(
    {"rm", "mv", "cp", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "patch", "dd", "truncate",
     "install", "apply_patch", "kill", "pkill", "killall", "reboot", "shutdown", "useradd", "crontab",
     "unzip", "tar"}
)  # fmt: skip
_WRITE_SUBS: dict[str, frozenset[str]] = {
    "git": frozenset(
        {"apply", "commit", "checkout", "switch", "reset", "merge", "cherry-pick", "rebase", "revert", "stash",
         "push", "pull", "add", "rm", "mv", "restore", "am", "clean", "init", "clone", "fetch"}
    ),
    "kubectl": frozenset(
        {"apply", "patch", "edit", "delete", "scale", "set", "create", "replace", "annotate", "label", "drain",
         "cordon", "uncordon", "taint", "autoscale", "expose", "run"}
    ),
    "helm": frozenset({"install", "upgrade", "rollback", "uninstall", "delete"}),
    "docker": frozenset({"run", "restart", "stop", "start", "rm", "kill", "build", "pull", "push", "create", "rmi"}),
    "systemctl": frozenset({"restart", "start", "stop", "reload", "enable", "disable", "kill", "mask"}),
    "terraform": frozenset({"apply", "destroy", "import", "taint"}),
    "make": frozenset({"install", "deploy", "clean", "migrate", "release"}),
}  # fmt: skip
_WRITE_SUBS["oc"] = _WRITE_SUBS["kubectl"]
_WRITE_SUBS["podman"] = _WRITE_SUBS["docker"]
_INSTALLERS = frozenset({"pip", "pip3", "npm", "yarn", "pnpm", "apt", "apt-get", "brew", "cargo", "go", "uv",
                         "poetry", "conda", "gem", "composer", "bundle"})  # fmt: skip
_INSTALL_SUBS = frozenset({"install", "add", "remove", "uninstall", "update", "upgrade", "get", "ci", "sync"})
_CLOUD_WRITE = re.compile(r"^(?:create|delete|put|update|start|stop|modify|reboot|terminate|deploy|set|run)")
_SQL_WRITE = re.compile(
    r"(?i)\b(?:insert\s+into|update\s+\w+\s+set|delete\s+from|alter|create|drop|truncate)\b"
)
_HTTP_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_LOG_TARGET = re.compile(r"^/tmp/|\.(?:log|out|txt)$")


def _curl_writes(argv: tuple[str, ...]) -> bool:
    for i, a in enumerate(argv):
        if a in ("-X", "--request") and i + 1 < len(argv) and argv[i + 1].upper() in _HTTP_WRITE_METHODS:
            return True
        if a.startswith("-X") and a[2:].upper() in _HTTP_WRITE_METHODS:
            return True
        if a in ("-d", "--data", "--data-raw", "--data-binary", "--json", "-F", "--form"):
            return True
    return False


def command_writes(cmd: SimpleCommand) -> bool:
    """True when the simple command changes files, services or packages."""
    prog, sub, argv = cmd.program, cmd.sub, cmd.argv
    if any(not _LOG_TARGET.search(t) for t in cmd.writes_to):
        return True
    if cmd.writes_to and not command_checks(cmd):
        return True
    if prog in _ALWAYS_WRITE:
        return prog != "tar" or any(a.startswith("-") and "x" in a for a in argv[1:2])
    if prog in ("sed", "perl") and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in argv[1:]):
        return True
    if prog == "tee":
        return any(not a.startswith("-") and not a.startswith("/dev/") for a in argv[1:])
    if prog in _WRITE_SUBS and sub in _WRITE_SUBS[prog]:
        return True
    if prog in ("kubectl", "oc") and sub == "rollout":
        rest = [a for a in argv[argv.index("rollout") + 1 :] if not a.startswith("-")]
        return bool(rest) and rest[0] in ("restart", "undo", "pause", "resume")
    if prog in ("docker", "podman") and sub == "compose":
        return any(a in ("up", "down", "restart", "stop", "start", "build", "rm") for a in argv[2:])
    if prog == "service" and any(a in ("restart", "start", "stop", "reload") for a in argv[1:]):
        return True
    if prog in _INSTALLERS and sub in _INSTALL_SUBS:
        return True
    if prog in ("aws", "gcloud", "az"):
        return any(_CLOUD_WRITE.match(a) for a in argv[2:4] if not a.startswith("-"))
    if prog in ("psql", "mysql", "sqlite3", "redis-cli"):
        return bool(_SQL_WRITE.search(" ".join(argv[1:]))) or (
            prog == "redis-cli" and any(a.upper() in ("SET", "DEL", "FLUSHALL", "FLUSHDB") for a in argv[1:])
        )
    if prog in ("curl", "http", "wget"):
        return _curl_writes(argv)
    return False


_TEST_RUNNERS = frozenset(
    {"pytest", "py.test", "tox", "nox", "jest", "mocha", "vitest", "rspec", "phpunit", "ctest", "bats"}
)
_TEST_SUBS: dict[str, frozenset[str]] = {
    "npm": frozenset({"test", "t", "run"}),
    "yarn": frozenset({"test", "run"}),
    "pnpm": frozenset({"test", "run"}),
    "go": frozenset({"test", "vet"}),
    "cargo": frozenset({"test", "check", "clippy"}),
    "make": frozenset({"test", "check", "tests", "lint", "verify"}),
    "mvn": frozenset({"test", "verify"}),
    "gradle": frozenset({"test", "check"}),
    "dotnet": frozenset({"test"}),
}
_PROBES = frozenset(
    {"curl", "wget", "http", "grep", "rg", "diff", "cat", "head", "tail", "ls", "ps", "journalctl", "dig",
     "nslookup", "ping", "nc", "netstat", "ss", "df", "free", "top", "wc", "find", "jq", "stat", "file",
     "test", "[", "promtool", "psql", "mysql", "redis-cli", "openssl"}
)  # fmt: skip
_PROBE_SUBS: dict[str, frozenset[str]] = {
    "kubectl": frozenset({"get", "describe", "logs", "top", "rollout", "events", "exec", "auth"}),
    "docker": frozenset({"ps", "logs", "inspect", "stats"}),
    "systemctl": frozenset({"status", "is-active", "is-failed", "show"}),
    "git": frozenset({"status", "diff", "log", "show"}),
    "helm": frozenset({"status", "list", "history", "test"}),
    "aws": frozenset({"cloudwatch", "logs"}),
}
_PROBE_SUBS["oc"] = _PROBE_SUBS["kubectl"]
_PROBE_SUBS["podman"] = _PROBE_SUBS["docker"]
_SCRIPT = re.compile(r"\.(?:py|js|ts|sh|rb)$")


def is_test_runner(cmd: SimpleCommand) -> bool:
    """A test suite run (pytest, go test, npm test, cargo test, ...)."""
    prog, sub = cmd.program, cmd.sub
    if prog in _TEST_RUNNERS:
        return True
    if prog in ("python", "python3") and len(cmd.argv) > 2 and cmd.argv[1] == "-m":
        return cmd.argv[2] in ("pytest", "unittest", "nose", "tox")
    if prog in ("npx", "bunx") and len(cmd.argv) > 1:
        return cmd.argv[1] in ("jest", "vitest", "mocha", "playwright")
    if prog in _TEST_SUBS and sub in _TEST_SUBS[prog]:
        return prog not in ("npm", "yarn", "pnpm") or sub != "run" or "test" in " ".join(cmd.argv[2:4])
    return False


def command_checks(cmd: SimpleCommand) -> bool:
    """True when the simple command tests, probes or inspects (without being a change itself)."""
    prog, sub = cmd.program, cmd.sub
    if is_test_runner(cmd) or prog in _PROBES:
        return True
    if prog in _PROBE_SUBS and sub in _PROBE_SUBS[prog]:
        return True
    if prog in ("python", "python3", "node", "bash", "sh", "ruby") and len(cmd.argv) > 1:
        return bool(_SCRIPT.search(cmd.argv[1])) or cmd.argv[1] == "-c"
    return bool(re.search(r"(?i)check|verify|validat|health|smoke", prog))


_STATUS_SUBS: dict[str, frozenset[str]] = {
    "kubectl": frozenset({"get"}),
    "oc": frozenset({"get"}),
    "systemctl": frozenset({"status", "is-active"}),
    "docker": frozenset({"ps"}),
    "podman": frozenset({"ps"}),
}
_STATUS_PROGRAMS = frozenset({"ps", "ls", "cat", "echo", "pwd", "which", "stat", "file", "wc"})
_STATUS_KINDS = re.compile(r"^(?:pods?|po|deploy(?:ments?)?|svc|services?|nodes?|rs|replicasets?|all)(?:/|$)")


def _positionals(args: tuple[str, ...]) -> list[str]:
    """The arguments that are neither flags nor the value of a global flag (``-n shop``)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in _VALUE_FLAGS:
            i += 2
            continue
        if not args[i].startswith("-"):
            out.append(args[i])
        i += 1
    return out


def is_status_only(cmd: SimpleCommand) -> bool:
    """A probe that shows something exists or runs, not how it behaves (``kubectl get pods``, ``ls``)."""
    prog, sub = cmd.program, cmd.sub
    if prog in _STATUS_PROGRAMS:
        return True
    if prog in _STATUS_SUBS and sub in _STATUS_SUBS[prog]:
        if prog in ("kubectl", "oc"):
            args = _positionals(cmd.argv[1:])[1:]
            wide = any(
                a in ("-o", "--output") or a.startswith(("-ojson", "-o=json", "-oyaml")) for a in cmd.argv
            )
            return not wide and bool(args) and bool(_STATUS_KINDS.match(args[0]))
        return True
    return False


KNOWN_PROGRAMS: frozenset[str] = frozenset(
    _MULTI
    | _ALWAYS_WRITE
    | _TEST_RUNNERS
    | _PROBES
    | _INSTALLERS
    | _STATUS_PROGRAMS
    | {"sed", "perl", "tee", "python", "python3", "node", "curl", "wget", "psql", "mysql", "echo", "printf"}
)
"""Program names the classifiers know (a tool named after one is a command line)."""
