"""Table-driven pins of the shell-command parser under the rule detectors (``_shell.py``).

Each table is a list of real-looking command lines with what the parser or a classifier says
about them today; every program of the classifier tables appears at least once.
"""

from __future__ import annotations

import pytest

from mastkit.annotate.detectors._shell import (
    KNOWN_PROGRAMS,
    SimpleCommand,
    _curl_writes,
    _newlines_to_semicolons,
    _strip_noise,
    _tokens,
    _unwrap,
    acting,
    command_checks,
    command_writes,
    heads,
    is_status_only,
    is_test_runner,
    parse_command,
)


@pytest.fixture(autouse=True)
def _fresh_parse_cache() -> None:
    """parse_command is cached: start each test empty so every line is really parsed."""
    parse_command.cache_clear()


def _one(line: str) -> SimpleCommand:
    (cmd,) = parse_command(line)
    return cmd


# -- noise, newlines, tokens ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cat <<EOF\nrm x\nEOF", "cat <<EOF"),
        ("cat <<-EOF > a\n\trm x\n\tEOF\nls", "cat <<EOF > a\nls"),
        ("cat <<'END'\nbody\nEND", "cat <<END"),
        ('cat <<"END"\nbody\nEND', "cat <<END"),
        ("cat <<EOF | sh\nx\nEOF  \nnext", "cat <<EOF | sh\nnext"),
        ("a \\\nb", "a  b"),
        ("a >/dev/null", "a  "),
        ("a 2>/dev/null", "a  "),
        ("a &>/dev/null", "a  "),
        ("a >> /dev/stderr", "a  "),
        ("a > /dev/stdout", "a  "),
        ("a >/dev/tty", "a  "),
        ("a >/dev/nullx", "a >/dev/nullx"),
        ("a 12>/dev/null", "a 12 "),
        ("a x2>/dev/null", "a x2 "),
        ("a 2>&1", "a  "),
        ("a >&2", "a  "),
        ("a 2<&0", "a  "),
        ("a 12>&1", "a  "),
        ("a 2>&-", "a  "),
        ("a x2>&1", "a x2>&1"),
        ("a 2> err", "a > err"),
        ("a;2> err", "a;> err"),
        ("a x2> err", "a x2> err"),
        ("a 21> err", "a 21> err"),
        ("a >out", "a >out"),
    ],
)
def test_strip_noise(text: str, expected: str) -> None:
    assert _strip_noise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\nb", "a ; b"),
        ("a\n\nb", "a ;  ; b"),
        ("echo 'x\ny'\nz", "echo 'x\ny' ; z"),
        ('echo "x\ny"\nz', 'echo "x\ny" ; z'),
        ('echo "it\'s\nok"\nz', 'echo "it\'s\nok" ; z'),
        ("echo 'say \"hi\nyo'\nz", "echo 'say \"hi\nyo' ; z"),
        ("plain", "plain"),
        ("echo XY\nls", "echo XY ; ls"),
    ],
)
def test_newlines_to_semicolons(text: str, expected: str) -> None:
    assert _newlines_to_semicolons(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a && b || c; d | e", ["a", "&&", "b", "||", "c", ";", "d", "|", "e"]),
        ("echo 'a b' \"c d\"", ["echo", "a b", "c d"]),
        ("ls # comment here", ["ls"]),
        ("echo a,b c:d $f X-ray", ["echo", "a,b", "c:d", "$f", "X-ray"]),
        ("echo x>f", ["echo", "x", ">", "f"]),
        ("echo 'open && b", ["echo", "'open", "&&", "b"]),
        ('echo "x;y|z>>f<g', ["echo", '"x', ";", "y", "|", "z", ">>", "f", "<", "g"]),
        ("echo 'a||b > c", ["echo", "'a", "||", "b", ">", "c"]),
        ("echo 'a &b", ["echo", "'a", "b"]),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert _tokens(text) == expected


# -- unwrap ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["FOO=1", "BAR_2=x", "make"], ["make"]),
        (["_X=1", "ls"], ["ls"]),
        (["FOO=1", "make", "test"], ["make", "test"]),
        (["then", "ls", "-l"], ["ls", "-l"]),
        (["sudo", "ls", "-l"], ["ls", "-l"]),
        (["1X=1", "ls"], ["1X=1", "ls"]),
        (["X", "=1"], ["X", "=1"]),
        (["do", "then", "else", "elif", "if", "while", "until", "!", "{", "ls"], ["ls"]),
        (["for", "f", "in", "a"], []),
        (["select", "x"], []),
        (["case", "$x", "in"], []),
        (["done"], []),
        (["fi"], []),
        (["esac"], []),
        (["}"], []),
        (["function", "f"], []),
        (["ls", "for"], ["ls", "for"]),
        (["sudo", "ls"], ["ls"]),
        (["/usr/bin/sudo", "ls"], ["ls"]),
        (["env", "A=1", "B=2", "ls"], ["ls"]),
        (["time", "ls"], ["ls"]),
        (["nohup", "ls"], ["ls"]),
        (["exec", "ls"], ["ls"]),
        (["command", "ls"], ["ls"]),
        (["stdbuf", "-oL", "ls"], ["ls"]),
        (["doas", "ls"], ["ls"]),
        (["sudo", "-u", "bob", "ls"], ["ls"]),
        (["sudo", "-g", "wheel", "ls"], ["ls"]),
        (["nice", "-n", "5", "ls"], ["ls"]),
        (["sudo", "-s", "sh", "ls"], ["ls"]),
        (["sudo", "-k", "x", "ls"], ["ls"]),
        (["timeout", "--signal", "KILL", "5", "ls"], ["ls"]),
        (["stdbuf", "-o", "L", "ls"], ["ls"]),
        (["stdbuf", "-e", "0", "ls"], ["ls"]),
        (["stdbuf", "-i", "0", "ls"], ["ls"]),
        (["sudo", "-C", "5", "ls"], ["ls"]),
        (["sudo", "-E", "ls"], ["ls"]),
        (["sudo", "-E", "-H", "ls"], ["ls"]),
        (["sudo", "-u"], []),
        (["sudo"], []),
        (["timeout", "30", "ls"], ["ls"]),
        (["timeout", "2.5", "ls"], ["ls"]),
        (["timeout", "30s", "ls"], ["ls"]),
        (["timeout", "5m", "ls"], ["ls"]),
        (["timeout", "1h", "ls"], ["ls"]),
        (["timeout", "2d", "ls"], ["ls"]),
        (["timeout", "5x", "ls"], ["5x", "ls"]),
        (["timeout", "-k", "5", "30", "ls"], ["ls"]),
        (["timeout"], []),
        (["sudo", "30", "ls"], ["30", "ls"]),
        (["nice", "-5", "ls"], ["ls"]),
        (["nice", "10", "ls"], ["ls"]),
        (["nice", "x10", "ls"], ["x10", "ls"]),
        (["nice"], []),
        (["env", "nice", "10", "ls"], ["ls"]),
        (["sudo", "timeout", "10", "ls"], ["ls"]),
        (["timeout", "10", "nice", "ls"], ["ls"]),
        (["sudo", "A=1", "ls"], ["ls"]),
        (["sudoer", "ls"], ["sudoer", "ls"]),
        (["ls", "sudo"], ["ls", "sudo"]),
        ([], []),
    ],
)
def test_unwrap(argv: list[str], expected: list[str]) -> None:
    assert _unwrap(list(argv)) == expected


# -- parse_command --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "argvs", "writes"),
    [
        ("a && b || c ; d | e & f |& g", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]], None),
        ("(cd x; ls)", [["cd", "x"], ["ls"]], None),
        ("case $x in a) ls;; esac", [["ls"]], None),
        ("echo a > out.txt", [["echo", "a"]], [("out.txt",)]),
        ("echo a >> log", [["echo", "a"]], [("log",)]),
        ("echo a >| f", [["echo", "a"]], [("f",)]),
        ("make &> build.log", [["make"]], [("build.log",)]),
        ("make &>> build.log", [["make"]], [("build.log",)]),
        ("sort < in.txt > out.txt", [["sort"]], [("out.txt",)]),
        ("cat <<< word", [["cat"]], [()]),
        ("cat <<EOF\nx\nEOF", [["cat"]], [()]),
        ("echo a > x; echo b", [["echo", "a"], ["echo", "b"]], [("x",), ()]),
        ("ls\npwd", [["ls"], ["pwd"]], None),
        ("ls \\\n -la", [["ls", "-la"]], None),
        ("sh -c 'rm a; ls'", [["rm", "a"], ["ls"]], None),
        ("zsh -lc 'ls'", [["ls"]], None),
        ("/bin/bash -ec 'ls'", [["ls"]], None),
        ("bash -x 'ls'", [["bash", "-x", "ls"]], None),
        ("bash -c", [["bash", "-c"]], None),
        ("bash script.sh", [["bash", "script.sh"]], None),
        ("fish -c 'ls'", [["fish", "-c", "ls"]], None),
        ("sudo FOO=1 ls -l", [["ls", "-l"]], None),
        ("for x in 1 2; do ls; done", [["ls"]], None),
        ("", [], None),
    ],
)
def test_parse_command_table(line: str, argvs: list[list[str]], writes: list[tuple[str, ...]] | None) -> None:
    cmds = parse_command(line)
    assert [list(c.argv) for c in cmds] == argvs
    if writes is not None:
        assert [c.writes_to for c in cmds] == writes


def test_parse_command_bash_c_keeps_outer_writes_separate() -> None:
    cmds = parse_command("bash -c 'echo a > inner.txt' && ls")
    assert [(c.argv, c.writes_to) for c in cmds] == [(("echo", "a"), ("inner.txt",)), (("ls",), ())]


@pytest.mark.parametrize(
    ("argv", "program", "sub", "head"),
    [
        (("/usr/bin/Python3", "x.py"), "python3", "", "python3"),
        ((), "", "", ""),
        (("kubectl", "-n", "shop", "logs", "pod"), "kubectl", "logs", "kubectl logs"),
        (("kubectl", "--namespace", "shop", "get", "po"), "kubectl", "get", "kubectl get"),
        (("kubectl", "--context", "c", "--kubeconfig", "k", "Apply"), "kubectl", "apply", "kubectl apply"),
        (("git", "-C", "repo", "status"), "git", "status", "git status"),
        (("git", "-c", "a=b", "log"), "git", "log", "git log"),
        (("git", "--no-pager", "diff"), "git", "diff", "git diff"),
        (("gcloud", "--project", "p", "--region", "r", "run"), "gcloud", "run", "gcloud run"),
        (("aws", "--profile", "p", "s3"), "aws", "s3", "aws s3"),
        (("docker", "-f", "x", "ps"), "docker", "ps", "docker ps"),
        (("docker", "--file", "x", "ps"), "docker", "ps", "docker ps"),
        (("docker", "-p", "x", "ps"), "docker", "ps", "docker ps"),
        (("conda", "--prefix", "x", "list"), "conda", "list", "conda list"),
        (("pip", "-m", "x", "list"), "pip", "list", "pip list"),
        (("kubectl", "-n"), "kubectl", "", "kubectl"),
        (("kubectl", "-v"), "kubectl", "", "kubectl"),
        (("git",), "git", "", "git"),
        (("ls", "-la", "dir"), "ls", "", "ls"),
        (("python", "-m", "pytest", "-q"), "python", "", "python -m pytest"),
        (("python3", "-m", "http.server"), "python3", "", "python3 -m http.server"),
        (("python", "-m"), "python", "", "python"),
        (("python", "-c", "pass"), "python", "", "python"),
        (("node", "-m", "x"), "node", "", "node"),
    ],
)
def test_program_sub_head(argv: tuple[str, ...], program: str, sub: str, head: str) -> None:
    cmd = SimpleCommand(argv)
    assert (cmd.program, cmd.sub, cmd.head) == (program, sub, head)


def test_acting_and_heads_leave_navigation_out() -> None:
    line = "cd /a && pushd b; popd; export X=1; source env; . env; set -e; true; :; unset X; alias l=ls; ls"
    assert [c.program for c in acting(parse_command(line))] == ["ls"]
    assert heads("cd x && kubectl -n a logs p | tail -3") == {"kubectl logs", "tail"}
    assert heads("cd x") == set()


# -- command_writes -------------------------------------------------------------------------------

_WRITES = [
    # always-write programs
    *[
        (line, True)
        for line in (
            "rm -f a",
            "mv a b",
            "cp a b",
            "mkdir d",
            "rmdir d",
            "touch f",
            "chmod +x f",
            "chown u f",
            "ln -s a b",
            "patch -p1",
            "dd if=a of=b",
            "truncate -s 0 f",
            "install -m 644 a b",
            "apply_patch",
            "kill 12",
            "pkill foo",
            "killall foo",
            "reboot",
            "shutdown -h now",
            "useradd bob",
            "crontab -e",
            "unzip a.zip",
            "/bin/RM a",
        )
    ],
    ("tar -xzf a.tgz", True),
    ("tar xzf a.tgz", False),
    ("tar -czf a.tgz d", False),
    ("tar --list -f a.tgz", False),
    ("tar", False),
    ("tar -tf a.tgz -x", False),
    ("tar -t -xf a.tgz", False),
    # in-place editors
    ("sed -i s/a/b/ f", True),
    ("sed -i.bak s/a/b/ f", True),
    ("sed --in-place s/a/b/ f", True),
    ("sed --in-place=.bak s/a/b/ f", True),
    ("perl -pi -e s/a/b/ f", False),
    ("perl -i -pe s/a/b/ f", True),
    ("sed -n p f", False),
    ("awk -i inplace x f", False),
    # tee
    ("tee out.txt", True),
    ("tee -a notes", True),
    ("tee /dev/stderr", False),
    ("tee -a", False),
    ("tee", False),
    # multiplexer sub-commands
    *[
        (f"git {s}", True)
        for s in (
            "apply",
            "commit",
            "checkout",
            "switch",
            "reset",
            "merge",
            "cherry-pick",
            "rebase",
            "revert",
            "stash",
            "push",
            "pull",
            "add",
            "rm",
            "mv",
            "restore",
            "am",
            "clean",
            "init",
            "clone",
            "fetch",
        )
    ],
    ("git status", False),
    ("git log", False),
    *[
        (f"kubectl {s} x", True)
        for s in (
            "apply",
            "patch",
            "edit",
            "delete",
            "scale",
            "set",
            "create",
            "replace",
            "annotate",
            "label",
            "drain",
            "cordon",
            "uncordon",
            "taint",
            "autoscale",
            "expose",
            "run",
        )
    ],
    ("oc delete pod x", True),
    ("kubectl get pods", False),
    *[(f"helm {s} x", True) for s in ("install", "upgrade", "rollback", "uninstall", "delete")],
    ("helm list", False),
    *[
        (f"docker {s} x", True)
        for s in (
            "run",
            "restart",
            "stop",
            "start",
            "rm",
            "kill",
            "build",
            "pull",
            "push",
            "create",
            "rmi",
        )
    ],
    ("podman run x", True),
    ("docker ps", False),
    *[
        (f"systemctl {s} nginx", True)
        for s in (
            "restart",
            "start",
            "stop",
            "reload",
            "enable",
            "disable",
            "kill",
            "mask",
        )
    ],
    ("systemctl status nginx", False),
    *[(f"terraform {s}", True) for s in ("apply", "destroy", "import", "taint")],
    ("terraform plan", False),
    *[(f"make {s}", True) for s in ("install", "deploy", "clean", "migrate", "release")],
    ("make build", False),
    # rollout
    *[(f"kubectl rollout {s} deploy/x", True) for s in ("restart", "undo", "pause", "resume")],
    ("oc rollout restart dc/x", True),
    ("kubectl -n a rollout --watch restart deploy/x", True),
    ("kubectl rollout history deploy/x", False),
    ("kubectl rollout", False),
    ("kubectl rollout --watch", False),
    # compose
    *[(f"docker compose {s}", True) for s in ("up", "down", "restart", "stop", "start", "build", "rm")],
    ("podman compose up", True),
    ("docker compose ps", False),
    ("docker logs start", False),
    ("podman inspect up", False),
    ("docker compose logs up", True),
    # service
    *[(f"service nginx {s}", True) for s in ("restart", "start", "stop", "reload")],
    ("service nginx status", False),
    ("service restart", True),
    # installers
    *[
        (f"{p} install x", True)
        for p in (
            "pip",
            "pip3",
            "npm",
            "yarn",
            "pnpm",
            "apt",
            "apt-get",
            "brew",
            "cargo",
            "uv",
            "poetry",
            "conda",
            "composer",
            "bundle",
        )
    ],
    *[(f"uv {s} x", True) for s in ("add", "remove", "uninstall", "update", "upgrade", "sync")],
    ("go get x", True),
    ("npm ci", True),
    ("pip list", False),
    ("gem install rails", False),
    ("npm ls", False),
    # cloud
    ("aws ec2 create-volume", True),
    ("aws ec2 delete-volume", True),
    ("aws s3api put-object", True),
    ("aws lambda update-function-code", True),
    ("aws ec2 start-instances", True),
    ("aws ec2 stop-instances", True),
    ("aws rds modify-db-instance", True),
    ("aws ec2 reboot-instances", True),
    ("aws ec2 terminate-instances", True),
    ("aws deploy x", False),
    ("gcloud app deploy", True),
    ("az webapp set x", True),
    ("az webapp config set", True),
    ("gcloud run deploy svc", True),
    ("az vm list", False),
    ("aws ec2 describe-instances --dry-run", False),
    ("aws --region x create-y", True),
    ("aws ec2 --debug create-volume", True),
    ("aws ec2 --debug x create-volume", False),
    ("aws ec2 x create-volume", True),
    ("aws ec2 x y create-volume", False),
    ("aws ec2", False),
    # databases
    ("psql -c 'insert into t values (1)'", True),
    ("psql -c 'UPDATE users SET a=1'", True),
    ("mysql -e 'delete from t'", True),
    ("sqlite3 db 'ALTER TABLE t ADD c'", True),
    ("sqlite3 db 'create table t(a)'", True),
    ("psql -c 'DROP TABLE t'", True),
    ("psql -c 'truncate t'", True),
    ("psql -c 'select created from t'", False),
    ("psql -c 'select * from updates'", False),
    ("psql", False),
    ("psql --command='DELETE FROM t' shop", True),
    ("redis-cli set k v", True),
    ("redis-cli DEL k", True),
    ("redis-cli flushall", True),
    ("redis-cli FLUSHDB", True),
    ("redis-cli get k", False),
    ("mysql -e 'SET x=1'", False),
    # http
    ("curl -X POST http://x", True),
    ("curl --request put http://x", True),
    ("curl -XPATCH http://x", True),
    ("curl -XDELETE http://x", True),
    ("curl -X GET http://x", False),
    ("curl -XGET http://x", False),
    ("curl -X", False),
    ("curl -d a=1 http://x", True),
    ("wget --data a http://x", True),
    ("http --data-raw a x", True),
    ("curl --data-binary @f http://x", True),
    ("curl --json {} http://x", True),
    ("curl -F f=@a http://x", True),
    ("curl --form f=@a http://x", True),
    ("curl http://x", False),
    # redirections
    ("echo x > config.ini", True),
    ("echo x > /tmp/a", True),
    ("grep x f > /tmp/a", False),
    ("grep x f > run.log", False),
    ("grep x f > run.out", False),
    ("grep x f > notes.txt", False),
    ("echo x > /etc/tmp/notes", True),
    ("echo x > a.log.bak", True),
    ("echo x > a.txt > b.cfg", True),
    ("pytest -q > /tmp/out.log", False),
    ("ls > /tmp/listing", False),
    ("make > build.log", True),
    # nothing
    ("echo hi", False),
    ("ls -la", False),
    ("unknown-tool", False),
]


@pytest.mark.parametrize(("line", "expected"), _WRITES)
def test_command_writes(line: str, expected: bool) -> None:
    assert command_writes(_one(line)) is expected


def test_command_writes_on_a_bare_command() -> None:
    assert command_writes(SimpleCommand(())) is False
    assert command_writes(SimpleCommand(("sed",), ("x.conf",))) is True


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("curl", "-X", "post"), True),
        (("curl", "-X", "GET", "-X", "POST"), True),
        (("curl", "-Xpost"), True),
        (("curl", "-XPUTX"), False),
        (("curl", "-X"), False),
        (("curl", "--request"), False),
        (("curl", "-H", "X: y"), False),
        (("curl", "-d"), True),
        (("curl",), False),
        (("curl", "url", "--data"), True),
        (("curl", "-X", "HEAD", "-d", "x"), True),
    ],
)
def test_curl_writes(argv: tuple[str, ...], expected: bool) -> None:
    assert _curl_writes(argv) is expected


# -- test runners ---------------------------------------------------------------------------------

_RUNNERS = [
    *[
        (p, True)
        for p in (
            "pytest",
            "py.test",
            "tox",
            "nox",
            "jest",
            "mocha",
            "vitest",
            "rspec",
            "phpunit",
            "ctest",
            "bats",
        )
    ],
    ("/usr/local/bin/PyTest -q", True),
    ("python -m pytest", True),
    ("python3 -m unittest", True),
    ("python -m nose", True),
    ("python3 -m tox", True),
    ("python -m pip install x", False),
    ("python -m", False),
    ("python -c pytest", False),
    ("python test_x.py", False),
    ("python3 -m pytest", True),
    ("npx jest", True),
    ("npx vitest run", True),
    ("bunx mocha", True),
    ("npx playwright test", True),
    ("npx eslint .", False),
    ("npx", False),
    ("npm test", True),
    ("npm t", True),
    ("npm run test", True),
    ("npm run test:unit", True),
    ("npm run --silent test", True),
    ("npm run build", False),
    ("npm run build -- test", False),
    ("npm run", False),
    ("yarn test", True),
    ("yarn run test", True),
    ("yarn run lint", False),
    ("pnpm test", True),
    ("pnpm run e2e-test", True),
    ("pnpm run dev", False),
    ("go test ./...", True),
    ("go vet ./...", True),
    ("go build", False),
    ("cargo test", True),
    ("cargo check", True),
    ("cargo clippy", True),
    ("cargo build", False),
    *[(f"make {s}", True) for s in ("test", "check", "tests", "lint", "verify")],
    ("make run", False),
    ("make all", False),
    ("mvn test", True),
    ("mvn verify", True),
    ("mvn package", False),
    ("gradle test", True),
    ("gradle check", True),
    ("gradle build", False),
    ("dotnet test", True),
    ("dotnet build", False),
    ("git test", False),
    ("ls", False),
]


@pytest.mark.parametrize(("line", "expected"), _RUNNERS)
def test_is_test_runner(line: str, expected: bool) -> None:
    assert is_test_runner(_one(line)) is expected


# -- checks ---------------------------------------------------------------------------------------

_CHECKS = [
    *[
        (p, True)
        for p in (
            "curl",
            "wget",
            "http",
            "grep",
            "rg",
            "diff",
            "cat",
            "head",
            "tail",
            "ls",
            "ps",
            "journalctl",
            "dig",
            "nslookup",
            "ping",
            "nc",
            "netstat",
            "ss",
            "df",
            "free",
            "top",
            "wc",
            "find",
            "jq",
            "stat",
            "file",
            "test",
            "[",
            "promtool",
            "psql",
            "mysql",
            "redis-cli",
            "openssl",
        )
    ],
    ("pytest", True),
    *[
        (f"kubectl {s} x", True)
        for s in ("get", "describe", "logs", "top", "rollout", "events", "exec", "auth")
    ],
    ("oc get pods", True),
    ("kubectl apply -f x", False),
    *[(f"docker {s}", True) for s in ("ps", "logs", "inspect", "stats")],
    ("podman ps", True),
    ("docker run x", False),
    *[(f"systemctl {s} x", True) for s in ("status", "is-active", "is-failed", "show")],
    ("systemctl restart x", False),
    *[(f"git {s}", True) for s in ("status", "diff", "log", "show")],
    ("git commit", False),
    *[(f"helm {s}", True) for s in ("status", "list", "history", "test")],
    ("helm install x", False),
    ("aws cloudwatch get-metric-data", True),
    ("aws logs tail", True),
    ("aws s3 ls", False),
    ("python check.py", True),
    ("python3 a.js", True),
    ("node app.ts", True),
    ("bash run.sh", True),
    ("sh deploy.rb", True),
    ("ruby spec.rb", True),
    ("python -c 1", True),
    ("python a.pyc", False),
    ("python", False),
    ("python -u a.py", False),
    ("perl a.py", False),
    ("./healthcheck", True),
    ("Check-Disk", True),
    ("verify-config", True),
    ("validate", True),
    ("Health", True),
    ("run-smoke", True),
    ("deploy", False),
    ("echo ok", False),
]


@pytest.mark.parametrize(("line", "expected"), _CHECKS)
def test_command_checks(line: str, expected: bool) -> None:
    assert command_checks(_one(line)) is expected


# -- status only ----------------------------------------------------------------------------------

_STATUS = [
    *[
        (p, True)
        for p in ("ps aux", "ls", "cat f", "echo x", "pwd", "which x", "stat f", "file f", "wc -l f")
    ],
    ("kubectl get pods", True),
    ("kubectl get pod x", True),
    ("kubectl get po", True),
    ("kubectl get deploy", True),
    ("kubectl get deployment x", True),
    ("kubectl get deployments", True),
    ("kubectl get svc", True),
    ("kubectl get service", True),
    ("kubectl get services", True),
    ("kubectl get node", True),
    ("kubectl get nodes", True),
    ("kubectl get rs", True),
    ("kubectl get replicaset", True),
    ("kubectl get replicasets", True),
    ("kubectl get all", True),
    ("kubectl get pods/web-1", True),
    ("kubectl get podsx", False),
    ("kubectl get configmap", False),
    ("kubectl get events", False),
    ("kubectl get", False),
    ("kubectl get pods -w -n shop", True),
    # a namespace flag before or after the verb is not the resource kind (was False before the fix)
    ("kubectl -n shop get pods -w", True),
    ("kubectl --namespace shop get deploy", True),
    ("kubectl get -n shop pods", True),
    ("kubectl --context prod -n shop get configmaps", False),
    ("kubectl -n shop get", False),
    ("kubectl get pods -o wide", False),
    ("kubectl get pods --output json", False),
    ("kubectl get pods -ojson", False),
    ("kubectl get pods -o=json", False),
    ("kubectl get pods -oyaml", False),
    ("kubectl get pods -owide", True),
    ("oc get pods", True),
    ("oc get configmap", False),
    ("oc get pods -o yaml", False),
    ("kubectl get -w pods", True),
    ("kubectl describe pods", False),
    ("systemctl status x", True),
    ("systemctl is-active x", True),
    ("systemctl show x", False),
    ("docker ps", True),
    ("podman ps", True),
    ("docker logs x", False),
    ("git status", False),
    ("grep x f", False),
]


@pytest.mark.parametrize(("line", "expected"), _STATUS)
def test_is_status_only(line: str, expected: bool) -> None:
    assert is_status_only(_one(line)) is expected


def test_known_programs_joins_the_tables() -> None:
    for name in (
        "kubectl",
        "rm",
        "pytest",
        "grep",
        "gem",
        "pwd",
        "sed",
        "perl",
        "tee",
        "python",
        "node",
        "printf",
        "echo",
        "curl",
    ):
        assert name in KNOWN_PROGRAMS
    assert "frobnicate" not in KNOWN_PROGRAMS
