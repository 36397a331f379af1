"""Redactor: each kind of secret, no false positives on ordinary text and code, and the
exact bytes a server receives."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from mastkit.providers import ChatMessage, ChatRequest, Redactor, get_provider, redact
from mastkit.testing import FakeLLMServer

from ._helpers import KEY

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq9\nq83Lx0v+Qm==\n-----END RSA PRIVATE KEY-----"

# (text, secret that must disappear, kind)
SECRETS = [
    (
        "export OPENAI_API_KEY=sk-proj-Abc123def456ghi789jkl012mno345",
        "sk-proj-Abc123def456ghi789jkl012mno345",
        "openai_key",
    ),
    (
        "old key sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL ok",
        "sk-1234567890abcdefghijklmno",
        "openai_key",
    ),
    (
        "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEf0123456789_abcdefGHIJKL-xyz",
        "sk-ant-api03-AbCdEf",
        "anthropic_key",
    ),
    ("id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
    ("session ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A", "aws_access_key_id"),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, "aws_secret_key"),
    (f'{{"AWS_SECRET_ACCESS_KEY": "{AWS_SECRET}"}}', AWS_SECRET, "aws_secret_key"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345 used", "ghp_0123456789abcdefghij", "github_token"),
    ("gho_0123456789abcdefghijABCDEFGHIJ012345", "gho_0123456789", "github_token"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
        "github_pat_11ABCDEFG",
        "github_token",
    ),
    ("key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890", "google_api_key"),
    ("HF_TOKEN hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_AbCdEfGhIjKl", "huggingface_token"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "xoxb-123456789012", "slack_token"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ("restricted rk_live_51H8abcDEF0123456789xyz", "rk_live_51H8abc", "stripe_key"),
    (f"cookie: session={JWT}", JWT, "jwt"),
    ("curl -H 'Authorization: Bearer abcDEF123456ghiJKL' https://x", "abcDEF123456ghiJKL", "authorization"),
    ('headers = {"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}', "dXNlcjpwYXNzd29yZA==", "authorization"),
    ("then use Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5 to call", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5", "bearer_token"),
    ("DATABASE_URL=postgres://admin:hunter2@db.example.com:5432/app", "hunter2", "url_password"),
    ("redis://:s3cr3tP4ss@cache:6379", "s3cr3tP4ss", "url_password"),
    (f"key file:\n{PEM}\nend", "MIIEpAIBAAKCAQEA7bq9", "private_key"),
    ("password=hunter22 in the env", "hunter22", "password"),
    ('{"db_password": "p@ssw0rd!"}', "p@ssw0rd!", "password"),
    ("client_secret: 'abcdef123456'", "abcdef123456", "secret"),
    ('config = {"api_key": "abcd1234efgh5678"}', "abcd1234efgh5678", "api_key"),
    ("SECRET_KEY=django-insecure-8x!v2k", "django-insecure-8x!v2k", "secret"),
    ("access_token: ya29.a0AfH6SMBx3", "ya29.a0AfH6SMBx3", "token"),
    ('{\\"password\\": \\"p@ssw0rd!\\"}', "p@ssw0rd!", "password"),
    # kinds added with whole-trace redaction
    (f'"SecretAccessKey": "{AWS_SECRET}",', AWS_SECRET, "aws_secret_key"),
    (f"AWS Secret Access Key [None]: {AWS_SECRET}", AWS_SECRET, "aws_secret_key"),
    (
        '"SessionToken": "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH"',
        "IQoJb3JpZ2lu",
        "aws_session_token",
    ),
    ("aws_session_token = FwoGZXIvYXdzEBYaDHhZ3k2", "FwoGZXIvYXdzEBYaDHhZ3k2", "aws_session_token"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsu"
        "Fq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
        "Eby8vdM02xNOcqFlqUwJPLlm",
        "azure_key",
    ),
    (
        "https://a.blob.core.windows.net/c/f?sv=2022&sig=AbCdEf0123456789AbCdEf0123%3D",
        "AbCdEf0123456789",
        "azure_sas",
    ),
    (
        "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKLMN/aBcDeFgHiJkLmNoPqRsTuVwX",
        "aBcDeFgHiJkLmNoPqRsTuVwX",
        "slack_webhook",
    ),
    ("npm token npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "npm_aBcDeFgHiJkLmNoPq", "npm_token"),
    ("curl -u admin:S3cretPassw0rd https://x", "S3cretPassw0rd", "cli_password"),
    ("psql --password hunter2xyz", "hunter2xyz", "cli_password"),
    ("tool --api-key='AbC123dEf456'", "AbC123dEf456", "cli_password"),
    ("mysql -u root -pS3cretPw db", "S3cretPw", "cli_password"),
    ("PGPASSWORD=correcthorse psql -h db", "correcthorse", "password"),
    ("DB_PASSWORD=lettersonly", "lettersonly", "password"),
    ("client secret GOCSPX-AbCdEfGhIjKlMnOpQrStUvWx1234", "AbCdEfGhIjKlMnOpQrStUvWx1234", "google_oauth"),
    (
        "token eyAiYWxnIjogIkhTMjU2IiB9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlMTIzNDU2Nzg5",
        "eyAiYWxnIjogIkhTMjU2IiB9",
        "jwt",
    ),
    (
        "t=ewogICJhbGciOiAiRVMyNTYiCn0.ewogInN1YiI6ICJ4In0.c2lnbmF0dXJlMTIzNDU2Nzg5",
        "ewogICJhbGciOiAiRVMyNTYiCn0",
        "jwt",
    ),
    ("postgres://app:ab/cd+ef12@db.internal:5432/app", "ab/cd+ef12", "url_password"),
    ("mail me at dana.okafor@brightwave-corp.io today", "dana.okafor@brightwave-corp.io", "email"),
    ("glpat-AbCdEf0123456789xYzW used", "AbCdEf0123456789xYzW", "gitlab_token"),
    (
        "SG.AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfG",
        "AbCdEfGhIjKlMnOpQrStUv",
        "vendor_token",
    ),
]


@pytest.mark.parametrize(("text", "secret", "kind"), SECRETS)
def test_secret_is_redacted(text: str, secret: str, kind: str) -> None:
    out, counts = redact(text)
    assert secret not in out
    assert counts[kind] >= 1, (out, counts)
    assert f"[REDACTED:{kind}]" in out


def test_context_is_kept() -> None:
    out, _ = redact("DATABASE_URL=postgres://admin:hunter2@db.example.com:5432/app")
    assert out == "DATABASE_URL=postgres://admin:[REDACTED:url_password]@db.example.com:5432/app"
    out, _ = redact("curl -H 'Authorization: Bearer abcDEF123456ghiJKL' https://x")
    assert out == "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://x"
    out, _ = redact(f"a\n{PEM}\nb")
    assert out == "a\n[REDACTED:private_key]\nb"


ORDINARY = [
    "The bearer of bad news said Authorization is required for all endpoints.",
    "Use max_tokens=4096, temperature=0.2 and a tokenizer; token_count: 1234; tokens_per_second = 12.5",
    "def connect(api_key: str | None = None, token: Optional[str] = None) -> Client:\n    password = getpass()",
    "token = tokens[0]\nsecret_name = 'db'\napi_key = os.environ.get('OPENAI_API_KEY')\nkey = cfg.key",
    "api_key=settings.OPENAI_API_KEY\npassword: ${DB_PASSWORD}\ntoken: <your-token>\nsecret = '***'",
    "pip install scikit-learn; risk-averse task-manager; see sk-learn docs",
    "commit 3f2a9b1c0d4e5f60718293a4b5c6d7e8f9012345, uuid 123e4567-e89b-12d3-a456-426614174000",
    "Visit https://github.com/user/repo, http://localhost:8080/v1, ssh://git@github.com/x.git or mail user@example.com",
    '{"token": 50256, "logprob": -0.2, "tokens": ["a", "b"], "token_type": "bearer", "max_tokens": 100}',
    '{"token": "Hello", "logprob": -0.01}',
    "The password: never share it. The secret: patience.",
    "AKIA is a prefix; ASIAN food; eyJ alone; hf_hub_download(repo_id='x'); ghp_ is a prefix; xoxo",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 and base64 aGVsbG8gd29ybGQ=",
    "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/http/client.py\", line 42\nKeyError: 'token'",
    "kubectl get secret my-secret -o yaml; the api key rotation runs nightly; pass --token-file ./t",
    "if password_hint: print('hint'); auth_token_url = 'https://auth.example.com/token'",
    "mkdir -p build && ssh -p 2222 host && docker run -u 1000:1000 -p 8080:80 img && tar -xzf a.tgz",
    "git clone git@github.com:org/repo.git; see http://host:8080/path@v2 and npm i left-pad@1.3.0",
    "TOKEN=$(cat /run/secrets/token) SECRET_KEY=${SECRET_KEY} API_KEY=changeme SORT_KEY=name",
    "export PRIMARY_KEY=id; MAX_TOKENS=4096; NUM_TOKENS=12",
    "The tokenizer splits text; keyword arguments; monkey=banana; the key: value pairs",
    "java.util.concurrent.ConcurrentHashMap.computeIfAbsent and com.example.MyService.run",
    "Write to support@example.com or admin@test.invalid; user@localhost",
    "header eyJhbGciOi alone, a.b.c, v1.2.3, 1.2.3.4, version 2024.11.26",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_untouched(text: str) -> None:
    out, counts = redact(text)
    assert out == text and not counts


def test_counts_and_idempotence() -> None:
    text = "a sk-proj-Abc123def456ghi789jkl012 b sk-proj-Zyx987wvu654tsr321qpo000 c password=hunter22"
    out, counts = redact(text)
    assert counts == {"openai_key": 2, "password": 1}
    again, counts2 = redact(out)
    assert again == out and not counts2


def test_extra_patterns_and_literals() -> None:
    r = Redactor(
        [("employee_id", r"EMP-\d{6}"), re.compile(r"ticket=(?P<secret>T\d+)"), r"INTERNAL-\w+"],
        literals=["my-very-own-secret"],
    )
    out, counts = r.redact(
        "EMP-123456 ticket=T42 INTERNAL-x1 my-very-own-secret sk-proj-Abc123def456ghi789jkl012"
    )
    assert out == (
        "[REDACTED:employee_id] ticket=[REDACTED:custom] [REDACTED:custom] [REDACTED:literal] [REDACTED:openai_key]"
    )
    assert counts == {"employee_id": 1, "custom": 2, "literal": 1, "openai_key": 1}
    assert "my-very-own-secret" not in repr(r)
    assert {"openai_key", "employee_id", "literal", "password"} <= set(r.kinds)
    only = Redactor([r"foo\d"], builtin=False)
    assert (
        only.redact("foo1 sk-proj-Abc123def456ghi789jkl012").text
        == "[REDACTED:custom] sk-proj-Abc123def456ghi789jkl012"
    )


def test_pii_is_configurable() -> None:
    text = "Call +1 (415) 555-0132 or write to dana.okafor@brightwave-corp.io"
    assert Redactor().redact(text).text == "Call +1 (415) 555-0132 or write to [REDACTED:email]"
    assert Redactor(pii=False).redact(text).text == text
    both, counts = Redactor(pii=("email", "phone")).redact(text)
    assert both == "Call [REDACTED:phone] or write to [REDACTED:email]"
    assert counts == {"phone": 1, "email": 1}
    with pytest.raises(ValueError, match="unknown PII"):
        Redactor(pii=("ssn",))


def test_redact_field_uses_the_key_name() -> None:
    r = Redactor()
    assert r.redact_field("password", "hunter").text == "[REDACTED:password]"
    assert r.redact_field("SecretAccessKey", "abc").text == "abc"  # too short to be one
    assert r.redact_field("SessionToken", "IQoJb3JpZ2lu").text == "[REDACTED:aws_session_token]"
    assert r.redact_field("token", "Hello").text == "Hello"  # a model token
    assert r.redact_field("max_tokens", "4096").text == "4096"
    assert r.redact_field("password", "${DB_PASSWORD}").text == "${DB_PASSWORD}"
    assert r.redact_field("description", "plain words").text == "plain words"


def test_large_text_is_fast() -> None:
    import time

    text = (
        "ordinary log line with max_tokens=10 and https://example.com/x?y=1\n" * 20_000
    ) + "sk-proj-Abc123def456ghi789jkl012"
    t0 = time.perf_counter()
    _, counts = redact(text)
    assert counts == {"openai_key": 1}
    assert time.perf_counter() - t0 < 10.0  # linear-time patterns: ~0.1 s; a backtracking one takes minutes


# -- end to end: what the server receives -------------------------------------------------------


def test_secrets_never_reach_the_server() -> None:
    secrets = {
        "openai_key": "sk-proj-Abc123def456ghi789jkl012mno345",
        "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
        "github_token": "ghp_0123456789abcdefghijABCDEFGHIJ012345",
        "url_password": "hunter2",
        "jwt": JWT,
    }
    prompt = (
        f"Tool output:\nOPENAI_API_KEY={secrets['openai_key']}\n"
        f"aws configure: {secrets['aws_access_key_id']}\n"
        f"git remote: https://{secrets['github_token']}@github.com/org/repo\n"
        f"db: mysql://root:{secrets['url_password']}@10.0.0.5/app\n"
        f"jwt: {secrets['jwt']}\n"
    )
    ordinary = "The agent retried the step 3 times; max_tokens=4096; see https://docs.example.com/a?b=c."
    with FakeLLMServer(default=None, handler=lambda _req: "ok") as srv:
        provider = get_provider("openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key=KEY)
        request = ChatRequest(
            messages=[ChatMessage(role="system", content=ordinary), ChatMessage(role="user", content=prompt)]
        )
        resp = asyncio.run(provider.complete(request))
        body = srv.chat_requests[0].body
    for secret in (*secrets.values(), KEY):
        assert secret.encode() not in body
        assert json.dumps(secret)[1:-1].encode() not in body
    assert resp.redactions == {
        "openai_key": 1,
        "aws_access_key_id": 1,
        "github_token": 1,
        "url_password": 1,
        "jwt": 1,
    }
    sent = json.loads(body)["messages"]
    assert sent[0]["content"] == ordinary  # ordinary text untouched, byte for byte
    assert "[REDACTED:openai_key]" in sent[1]["content"]
    assert "https://[REDACTED:github_token]@github.com/org/repo" in sent[1]["content"]


def test_redaction_opt_out() -> None:
    secret = "sk-proj-Abc123def456ghi789jkl012mno345"
    with FakeLLMServer(default=None, handler=lambda _req: "ok") as srv:
        provider = get_provider("openai:gpt-4o-mini", base_url=srv.openai_base_url, api_key=KEY, redact=False)
        resp = asyncio.run(
            provider.complete(ChatRequest(messages=[ChatMessage(role="user", content=secret)]))
        )
        assert secret.encode() in srv.chat_requests[0].body
    assert resp.redactions == {}


def test_custom_redactor_on_provider() -> None:
    with FakeLLMServer(default=None, handler=lambda _req: "ok") as srv:
        provider = get_provider(
            "openai:gpt-4o-mini",
            base_url=srv.openai_base_url,
            api_key=KEY,
            redactor=Redactor([("patient_id", r"PAT-\d{4}")]),
        )
        resp = asyncio.run(
            provider.complete(ChatRequest(messages=[ChatMessage(role="user", content="PAT-1234")]))
        )
        assert b"PAT-1234" not in srv.chat_requests[0].body
    assert resp.redactions == {"patient_id": 1}
