"""A deterministic corpus of fake, format-valid secrets embedded in realistic trace events.

Every secret is generated here from a fixed seed (no real key is in the repository). Each
:class:`Secret` names the parts that must never leave mastkit: the secret without its public
vendor prefix (``sk-ant-api03-`` is public, the 95 characters after it are not).
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

from mastkit.traces.model import Event, ToolCall, ToolResult, Trace

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Secret:
    kind: str
    """The redaction kind expected for it."""
    value: str
    """The whole secret as it appears in the trace."""
    parts: tuple[str, ...]
    """What must not leak: the secret without its public prefix (several lines for a PEM key)."""


class _Gen:
    def __init__(self, seed: int = 20261126) -> None:
        self.rng = random.Random(seed)
        self.secrets: list[Secret] = []

    def s(self, alphabet: str, n: int) -> str:
        # at least one digit and one of each case where the alphabet has them: format-valid and random-looking
        while True:
            out = "".join(self.rng.choice(alphabet) for _ in range(n))
            if (not any(c.isdigit() for c in alphabet) or any(c.isdigit() for c in out)) and (
                not any(c.isupper() for c in alphabet) or any(c.isupper() for c in out)
            ):
                return out

    def letters(self, n: int) -> str:
        return "".join(self.rng.choice(string.ascii_lowercase) for _ in range(n))

    def add(self, kind: str, prefix: str, body: str, suffix: str = "") -> str:
        value = prefix + body + suffix
        self.secrets.append(Secret(kind, value, (body,)))
        return value


def _b64url(obj: str) -> str:
    return base64.urlsafe_b64encode(obj.encode()).decode().rstrip("=")


def build_corpus(seed: int = 20261126) -> tuple[list[Secret], list[Event], str, str]:
    """``(secrets, events, straddle_log, pem_body)``: the secrets; realistic events holding
    them; and a long unsegmented log (for a raw trace) whose secrets straddle the cuts."""
    g = _Gen(seed)
    anth = g.add("anthropic_key", "sk-ant-api03-", g.s(URLSAFE, 93), "AA")
    oai_proj = g.add("openai_key", "sk-proj-", g.s(URLSAFE, 156))
    oai_old = g.add("openai_key", "sk-", g.s(ALNUM, 20) + "T3BlbkFJ" + g.s(ALNUM, 20))
    oai_svc = g.add("openai_key", "sk-svcacct-", g.s(URLSAFE, 64))
    akia = g.add("aws_access_key_id", "AKIA", g.s(UPPER, 16))
    asia = g.add("aws_access_key_id", "ASIA", g.s(UPPER, 16))
    sts_secret = g.add("aws_secret_key", "", g.s(B64, 40))
    sts_token = g.add("aws_session_token", "", "IQoJb3JpZ2luX2VjE" + g.s(B64, 340) + "==")
    cfg_secret = g.add("aws_secret_key", "", g.s(B64, 40))
    file_secret = g.add("aws_secret_key", "", g.s(B64, 40))
    file_token = g.add("aws_session_token", "", "FwoGZXIvYXdzE" + g.s(B64, 200))
    azure = g.add("azure_key", "", g.s(B64, 86) + "==")
    sas = g.add("azure_sas", "", g.s(ALNUM, 43) + "%3D")
    slack_hook = g.add(
        "slack_webhook", "", "T" + g.s(UPPER, 8) + "/B" + g.s(UPPER, 10) + "/" + g.s(ALNUM, 24)
    )
    xoxb = g.add(
        "slack_token", "xoxb-", "-".join([g.s("0123456789", 12), g.s("0123456789", 13), g.s(ALNUM, 24)])
    )
    npm = g.add("npm_token", "npm_", g.s(ALNUM, 36))
    npmrc = g.add(
        "token",
        "",
        g.s(HEX, 8) + "-" + g.s(HEX, 4) + "-4" + g.s(HEX, 3) + "-a" + g.s(HEX, 3) + "-" + g.s(HEX, 12),
    )
    curl_pw = g.add("cli_password", "", g.s(ALNUM, 14) + "!")
    flag_pw = g.add("cli_password", "", g.s(ALNUM, 16))
    mysql_pw = g.add("cli_password", "", g.s(ALNUM, 12))
    pg_pw = g.add("password", "", g.letters(14))
    gocspx = g.add("google_oauth", "GOCSPX-", g.s(URLSAFE, 28))
    jwt_payload = _b64url(json.dumps({"sub": g.s(ALNUM, 10), "iat": 1700000000, "role": "admin"}))
    jwt_std = g.add(
        "jwt", "", _b64url('{"alg":"HS256","typ":"JWT"}') + "." + jwt_payload + "." + g.s(URLSAFE, 43)
    )
    jwt_eya = g.add(
        "jwt", "", _b64url('{ "alg": "RS256", "kid": "k1" }') + "." + jwt_payload + "." + g.s(URLSAFE, 86)
    )
    jwt_ewog = g.add(
        "jwt",
        "",
        _b64url('{\n  "alg": "ES256"\n}') + "." + _b64url('{\n "sub": "x1"\n}') + "." + g.s(URLSAFE, 64),
    )
    url_pw = g.add("url_password", "", g.s(ALNUM, 6) + "/" + g.s(ALNUM, 6) + "+" + g.s(ALNUM, 4))
    email1 = g.add("email", "", "dana.okafor" + g.s("0123456789", 2) + "@brightwave-corp.io")
    email2 = g.add("email", "", "ops-" + g.letters(6) + "@mailhost-" + g.letters(5) + ".de")
    pem_lines = [g.s(B64, 64) for _ in range(18)] + [g.s(B64, 40) + "=="]
    g.secrets.append(Secret("private_key", "\n".join(pem_lines), tuple(pem_lines)))
    ssh_lines = [g.s(B64, 70) for _ in range(6)]
    g.secrets.append(Secret("private_key", "\n".join(ssh_lines), tuple(ssh_lines)))
    ghp = g.add("github_token", "ghp_", g.s(ALNUM, 36))
    ghpat = g.add("github_token", "github_pat_", g.s(ALNUM, 22) + "_" + g.s(ALNUM, 59))
    glpat = g.add("gitlab_token", "glpat-", g.s(URLSAFE, 20))
    aiza = g.add("google_api_key", "AIza", g.s(URLSAFE, 35))
    hf = g.add("huggingface_token", "hf_", g.s(ALNUM, 34))
    stripe = g.add("stripe_key", "sk_live_", g.s(ALNUM, 24))
    whsec = g.add("stripe_key", "whsec_", g.s(ALNUM, 32))
    sendgrid = g.add("vendor_token", "SG.", g.s(URLSAFE, 22) + "." + g.s(URLSAFE, 43))
    twilio = g.add("vendor_token", "SK", g.s(HEX, 32))
    mailchimp = g.add("vendor_token", "", g.s(HEX, 32) + "-us14")
    telegram = g.add("vendor_token", "", g.s("0123456789", 10) + ":AA" + g.s(URLSAFE, 33))
    discord = g.add("discord_webhook", "", g.s("0123456789", 18) + "/" + g.s(URLSAFE, 68))
    pypi = g.add("pypi_token", "pypi-", "AgEIcHlwaS5vcmc" + g.s(URLSAFE, 120))
    dop = g.add("vendor_token", "dop_v1_", g.s(HEX, 64))
    dapi = g.add("vendor_token", "dapi", g.s(HEX, 32))
    shpat = g.add("vendor_token", "shpat_", g.s(HEX, 32))
    db_pw = g.add("password", "", g.letters(16))
    mysql_pwd = g.add("password", "", g.s(ALNUM, 12))
    django = g.add("secret", "", "django-insecure-" + g.s(ALNUM + "!@#%^&*", 40))
    client_secret = g.add("secret", "", g.s(URLSAFE, 32))
    bearer = g.add("authorization", "", g.s(URLSAFE, 40))
    token_flag = g.add("cli_password", "", g.s(ALNUM, 32))
    sshpass = g.add("cli_password", "", g.s(ALNUM, 12))
    redis_pw = g.add("cli_password", "", g.s(ALNUM, 20))
    hvs = g.add("vendor_token", "hvs.", g.s(URLSAFE, 90))
    gsk = g.add("vendor_token", "gsk_", g.s(ALNUM, 52))
    sq = g.add("vendor_token", "sq0csp-", g.s(URLSAFE, 43))
    ya29 = g.add("google_oauth", "ya29.", g.s(URLSAFE, 120))
    age = g.add("vendor_token", "AGE-SECRET-KEY-1", g.s("ACDEFGHJKLMNPQRSTUVWXYZ023456789", 58))
    doppler = g.add("vendor_token", "dp.pt.", g.s(ALNUM, 43))
    redis_url = g.add("url_password", "", g.s(ALNUM, 18))
    api_key_flag = g.add("cli_password", "", g.s(ALNUM, 24))
    tool_pw = g.add("password", "", g.letters(12))
    straddle_anth = g.add("anthropic_key", "sk-ant-api03-", g.s(URLSAFE, 93), "AA")
    elided_oai = g.add("openai_key", "sk-proj-", g.s(URLSAFE, 48))
    straddle_pem = [g.s(B64, 64) for _ in range(19)] + [g.s(B64, 24) + "=="]
    g.secrets.append(Secret("private_key", "\n".join(straddle_pem), tuple(straddle_pem)))

    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(pem_lines) + "\n-----END RSA PRIVATE KEY-----"
    ssh = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(ssh_lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    )
    env_dump = "\n".join(
        [
            "HOME=/home/agent",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            f"ANTHROPIC_API_KEY={anth}",
            f"OPENAI_API_KEY={oai_proj}",
            f"AWS_ACCESS_KEY_ID={akia}",
            f"PGPASSWORD={pg_pw}",
            f"DB_PASSWORD={db_pw}",
            f"MYSQL_PWD={mysql_pwd}",
            f"SECRET_KEY={django}",
            f"GITHUB_TOKEN={ghp}",
            f"HF_TOKEN={hf}",
            f"STRIPE_SECRET_KEY={stripe}",
            f"STRIPE_WEBHOOK_SECRET={whsec}",
            f"SENDGRID_API_KEY={sendgrid}",
            f"TWILIO_API_KEY={twilio}",
            f"MAILCHIMP_KEY={mailchimp}",
            f"TELEGRAM_BOT={telegram}",
            f"DIGITALOCEAN_ACCESS_TOKEN={dop}",
            f"DATABRICKS_HOST=https://adb-123.azuredatabricks.net DATABRICKS_TOKEN={dapi}",
            f"SHOPIFY_ADMIN={shpat}",
            f"VAULT_TOKEN={hvs}",
            f"GROQ_API_KEY={gsk}",
            f"SQUARE_SECRET={sq}",
            f"SOPS_AGE_KEY={age}",
            f"DOPPLER_TOKEN={doppler}",
            "LANG=C.UTF-8",
            "MAX_TOKENS=4096",
        ]
    )
    sts = json.dumps(
        {
            "Credentials": {
                "AccessKeyId": asia,
                "SecretAccessKey": sts_secret,
                "SessionToken": sts_token,
                "Expiration": "2026-11-27T10:00:00Z",
            }
        },
        indent=4,
    )
    creds_file = (
        "[default]\n"
        f"aws_access_key_id = {akia}\n"
        f"aws_secret_access_key = {file_secret}\n"
        f"aws_session_token = {file_token}\n"
        "region = eu-west-1\n"
    )
    events_text: list[tuple[str, str, str]] = [
        (
            "user",
            "message",
            f"Deploy the app. Contact me at {email1} if anything breaks. The repo is private.",
        ),
        ("coder", "tool_call", "env | sort"),
        ("tool", "tool_result", env_dump),
        ("coder", "tool_call", "aws sts get-session-token --duration-seconds 3600"),
        ("tool", "tool_result", sts),
        ("coder", "tool_call", "aws configure"),
        (
            "tool",
            "tool_result",
            f"AWS Access Key ID [None]: {akia}\nAWS Secret Access Key [None]: {cfg_secret}\n"
            "Default region name [None]: eu-west-1\nDefault output format [None]: json",
        ),
        ("coder", "tool_call", "cat ~/.aws/credentials"),
        ("tool", "tool_result", creds_file),
        ("coder", "tool_call", f"curl -s -u deploy:{curl_pw} https://ci.internal/api/builds"),
        ("coder", "tool_call", f"psql --host db --password {flag_pw} -c 'select 1'"),
        ("coder", "tool_call", f"mysql -h db -u root -p{mysql_pw} app < dump.sql"),
        ("coder", "tool_call", f"sshpass -p {sshpass} ssh deploy@10.0.0.7 uptime"),
        ("coder", "tool_call", f"redis-cli -h cache -a {redis_pw} ping"),
        ("coder", "tool_call", f"gh api user --token {token_flag}"),
        ("coder", "tool_call", f"openai api models.list --api-key={api_key_flag}"),
        ("coder", "tool_call", f"curl -H 'Authorization: Bearer {bearer}' https://api.internal/v1/me"),
        (
            "tool",
            "tool_result",
            f"DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey={azure};EndpointSuffix=core.windows.net\n"
            f"https://prodstore.blob.core.windows.net/c/report.pdf?sv=2022-11-02&se=2026-12-01&sp=r&sig={sas}",
        ),
        (
            "coder",
            "message",
            f"Posting to https://hooks.slack.com/services/{slack_hook} and the bot uses {xoxb}.",
        ),
        (
            "tool",
            "tool_result",
            f"//registry.npmjs.org/:_authToken={npmrc}\nalways-auth=true\nnpm token: {npm}",
        ),
        (
            "coder",
            "message",
            f"The OAuth client: client id 12345-abc.apps.googleusercontent.com, secret {gocspx}.",
        ),
        ("tool", "tool_result", f"access token {ya29} expires in 3599"),
        ("tool", "tool_result", f"session cookie: {jwt_std}\nid_token={jwt_eya}\nassertion: {jwt_ewog}"),
        (
            "tool",
            "tool_result",
            f"DATABASE_URL=postgres://app:{url_pw}@db.internal:5432/app\n"
            f"REDIS_URL=redis://:{redis_url}@cache.internal:6379/0",
        ),
        ("coder", "tool_call", f"cat > deploy_key <<EOF\n{pem}\nEOF"),
        ("tool", "tool_result", f"$ cat ~/.ssh/id_ed25519\n{ssh}"),
        ("coder", "message", f"Pushed with {ghpat}; GitLab mirror uses {glpat}; maps key {aiza}."),
        ("coder", "message", f"Legacy key {oai_old}, service account {oai_svc}."),
        (
            "tool",
            "tool_result",
            f"Webhook: https://discord.com/api/webhooks/{discord}\n[pypi]\npassword = {pypi}",
        ),
        (
            "tool",
            "tool_result",
            json.dumps(
                {"web": {"client_id": "x.apps.googleusercontent.com", "client_secret": client_secret}}
            ),
        ),
        ("user", "message", f"Also cc {email2} on the incident report."),
    ]
    events: list[Event] = []
    for i, (who, kind, text) in enumerate(events_text):
        if kind == "tool_call":
            events.append(
                Event(
                    seq=i,
                    kind="tool_call",
                    actor=who,
                    role="assistant",
                    tool_call=ToolCall(
                        name="bash",
                        call_id=f"c{i}",
                        arguments={"command": text},
                        arguments_raw=json.dumps({"command": text}),
                    ),
                )
            )
        elif kind == "tool_result":
            events.append(
                Event(
                    seq=i,
                    kind="tool_result",
                    actor=who,
                    role="tool",
                    tool_result=ToolResult(call_id=f"c{i - 1}", name="bash", output=text, exit_code=0),
                )
            )
        else:
            events.append(
                Event(
                    seq=i,
                    kind="message",
                    actor=who,
                    role="user" if who == "user" else "assistant",
                    content=text,
                )
            )
    n = len(events)
    # a parsed tool argument under a credential key (only the key says it is a password)
    events.append(
        Event(
            seq=n,
            kind="tool_call",
            actor="coder",
            role="assistant",
            tool_call=ToolCall(
                name="db_connect",
                call_id="dbc",
                arguments={"host": "db.internal", "user": "app", "password": tool_pw},
            ),
        )
    )
    # a long tool output whose OpenAI key sits across the head/tail elision cut (head = 800 chars)
    filler = "".join(g.rng.choice("abcdefghij klmnop\n") for _ in range(779))
    events.append(
        Event(
            seq=n + 1,
            kind="tool_result",
            actor="tool",
            role="tool",
            tool_result=ToolResult(name="bash", output=filler + " " + elided_oai + " " + "tail line\n" * 150),
        )
    )
    events.append(
        Event(seq=n + 2, kind="message", actor="coder", role="assistant", content="All done; deployed.")
    )
    line1 = "boot: " + "x" * 1494 + "\n"
    line2 = "log: " + "y" * 2395 + " key " + straddle_anth + " end\n"
    pem2 = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(straddle_pem) + "\n-----END PRIVATE KEY-----\n"
    straddle_log = line1 + line2 + ("z" * 70 + "\n") * 45 + "config loaded\n" + pem2 + ("w" * 70 + "\n") * 30
    return g.secrets, events, straddle_log, "\n".join(straddle_pem)


def corpus_trace(trace_id: str = "leaky-run") -> tuple[list[Secret], Trace, Trace]:
    """The secrets, a structured trace holding them, and a raw unsegmented trace whose secrets
    straddle the part cuts."""
    secrets, events, log, _pem = build_corpus()
    trace = Trace(
        trace_id=trace_id,
        source_format="test",
        task="Deploy the shop; credentials are in the env.",
        events=events,
    )
    raw = Trace(
        trace_id=trace_id + "-raw",
        source_format="test",
        segmentation="raw_unsegmented",
        events=[Event(seq=0, kind="message", actor="agent", role="assistant", content=log)],
    )
    return secrets, trace, raw


def leaks(secrets: list[Secret], haystack: str, n: int = 8) -> list[tuple[str, str]]:
    """``(kind, leaked piece)`` for every secret part with a substring of ``n``+ characters in
    ``haystack``."""
    grams = {haystack[i : i + n] for i in range(len(haystack) - n + 1)}
    found = []
    for s in secrets:
        for part in s.parts:
            for i in range(len(part) - n + 1):
                if part[i : i + n] in grams:
                    found.append((s.kind, part[i : i + n]))
                    break
    return found
