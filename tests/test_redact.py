"""Redaction: the fixture corpus of secrets and look-alikes, placeholders, speed and linear-time scanning."""

from __future__ import annotations

import itertools
import json
import random
import string
import time
from pathlib import Path

import pytest

from hermes_bowerbird.curation.extract import extract_candidates
from hermes_bowerbird.curation.redact import SecretMatch, find_secrets, redact, without_secrets

CASES_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "redaction_cases.jsonl"
CASES = [json.loads(line) for line in CASES_PATH.read_text().splitlines() if line.strip()]
POSITIVES = [c for c in CASES if c["expect"] == "positive"]
NEGATIVES = [c for c in CASES if c["expect"] == "negative"]


def test_corpus_is_large_enough() -> None:
    assert len(POSITIVES) >= 40
    assert len(NEGATIVES) >= 40


@pytest.mark.parametrize("case", POSITIVES, ids=lambda c: c["text"][:40])
def test_positive_case_is_redacted(case: dict[str, object]) -> None:
    text = str(case["text"])
    out = redact(text)
    for secret in case["secrets"]:  # type: ignore[attr-defined]
        assert secret not in out
    kinds = {m.kind for m in find_secrets(text)}
    assert kinds == set(case["kinds"])  # type: ignore[call-overload]
    for kind in kinds:
        assert f"[REDACTED:{kind}]" in out


@pytest.mark.parametrize("case", NEGATIVES, ids=lambda c: c["text"][:40])
def test_negative_case_is_unchanged(case: dict[str, object]) -> None:
    text = str(case["text"])
    assert find_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(
    "text, kept",
    [
        ("postgres://bob:s3cretFake9@db.local:5432/app", ["postgres://bob:", "@db.local:5432/app"]),
        ("password=hunter2fake # comment", ["password=", " # comment"]),
        ('"api_key": "abcd1234fakeefgh5678"}', ['"api_key": "', '"}']),
        ("Authorization: Bearer abcDEF1234567890ghiJKL", ["Authorization: Bearer "]),
        # a password word is never cut for its value: "pass" + "word"
        ("my login is priya.k and the password's Squash2024!", ["and the password's "]),
        ("login admin / password", ["login admin / password"]),
    ],
)
def test_only_the_value_is_replaced(text: str, kept: list[str]) -> None:
    out = redact(text)
    for piece in kept:
        assert piece in out


def test_specific_kind_wins_over_generic() -> None:
    token = "ghp_" + "FakeGitHubTok3n" * 3
    token = token[:40]
    assert redact(f"GITHUB_TOKEN={token}") == "GITHUB_TOKEN=[REDACTED:github_token]"


def test_spans_are_sorted_and_disjoint() -> None:
    text = "a AKIAFAKE2EXAMPLE7KEY b password=hunter2fake c 4111111111111111"
    matches = find_secrets(text)
    assert [m.kind for m in matches] == ["aws_access_key", "password", "credit_card"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(matches))
    assert matches[0] == SecretMatch("aws_access_key", 2, 22)


def test_redaction_is_idempotent() -> None:
    for case in POSITIVES:
        once = redact(str(case["text"]))
        assert redact(once) == once


ADVERSARIAL = [
    "a" * 1_000_000,
    "eyJ" * 333_334,
    "eyJabcdefgh." * 90_000,
    "password=" * 110_000,
    "token: " * 140_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" * 32_000,
    "x://" * 250_000,
    "a://b:c" * 140_000,
    "4111 " * 200_000,
    "sk-" + "a-" * 500_000,
    "AKIA" * 250_000,
    "Bearer " * 140_000,
    # commands and configuration read by their structure
    "docker login -u a " * 60_000,
    " -p" * 330_000,
    "--password " * 90_000,
    "-storepass " * 90_000,
    "kubectl create secret generic a --from-literal=a=" * 20_000,
    'variable "db_password" { type = string ' * 25_000,
    "config set a_token " * 50_000,
    "kind: Secret\ndata:\n" + "  a: b\n" * 140_000,
    "[secrets]\n" + "k = 'v\n" * 120_000,
    "secrets:\n" + " " * 1_000_000,
]


# Not a speed target (benchmarks/bench_capture.py times redaction on real turns): a quadratic scan of a megabyte
# takes minutes, so a bound far above a loaded machine's linear time catches it without flaking.
LINEAR_BOUND_SECONDS = 30.0


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_megabyte_input_scans_in_linear_time(text: str) -> None:
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < LINEAR_BOUND_SECONDS


def test_megabyte_of_random_printable_text() -> None:
    rng = random.Random(3)
    text = "".join(rng.choice(string.printable) for _ in range(1_000_000))
    start = time.perf_counter()
    redact(text)
    assert time.perf_counter() - start < LINEAR_BOUND_SECONDS


SECRETS_PATH = Path(__file__).resolve().parent / "fixtures" / "secrets_corpus.jsonl"
SECRETS = [json.loads(line) for line in SECRETS_PATH.read_text().splitlines() if line.strip()]


def test_secrets_corpus_has_forty_forms() -> None:
    assert len({row["form"] for row in SECRETS}) >= 40


@pytest.mark.parametrize("row", SECRETS, ids=lambda r: r["form"])
def test_secrets_corpus_sentence_loses_its_secret(row: dict[str, str]) -> None:
    assert row["secret"] not in redact(row["text"])


TWINNED = [row for row in SECRETS if "twin" in row]


def test_flag_and_config_forms_come_with_benign_twins() -> None:
    assert len(TWINNED) >= 10


@pytest.mark.parametrize("row", TWINNED, ids=lambda r: r["form"])
def test_the_benign_twin_of_a_secret_form_is_unchanged(row: dict[str, str]) -> None:
    assert redact(row["twin"]) == row["twin"]


@pytest.mark.parametrize(
    "text, redacted",
    [
        # the flag's value only, wherever the command puts it, spelled out in full or continued over lines
        (
            "docker login \\\n  -u bot \\\n  -p Sl4shPw99 \\\n  reg.io",
            "docker login \\\n  -u bot \\\n  -p [REDACTED:command_line_password] \\\n  reg.io",
        ),
        (
            "redis-cli -h cache -p 6380 -a R3disAuthPw9 ping",
            "redis-cli -h cache -p 6380 -a [REDACTED:command_line_password] ping",
        ),
        (
            "http --auth bob:Sup3rS3cret x.org",
            "http --auth bob:[REDACTED:command_line_password] x.org",
        ),
        (
            "openssl enc -pass pass:Encr7ptPw -in a",
            "openssl enc -pass pass:[REDACTED:command_line_password] -in a",
        ),
        (
            "kubectl create secret generic db --from-literal=user=app --from-literal=password=K8sL1t",
            "kubectl create secret generic db --from-literal=user=[REDACTED:command_line_password]"
            " --from-literal=password=[REDACTED:command_line_password]",
        ),
        # a Kubernetes Secret's values are all secret; a ConfigMap's none
        (
            "kind: Secret\ndata:\n  user: YXBw\n---\nkind: ConfigMap\ndata:\n  mode: production-9\n",
            "kind: Secret\ndata:\n  user: [REDACTED:secret]\n---\nkind: ConfigMap\ndata:\n  mode: production-9\n",
        ),
        # a secrets' section keeps who and where: only the password-like value goes
        (
            '[credentials]\nuser = "svc-01"\nkey = "Tk9Qm2Lp7Xw"\n',
            '[credentials]\nuser = "svc-01"\nkey = "[REDACTED:secret]"\n',
        ),
        (
            "database:\n  credentials:\n    user: app\n    token: abc9Def2Ghi\n  host: db\n",
            "database:\n  credentials:\n    user: app\n    token: [REDACTED:token]\n  host: db\n",
        ),
    ],
)
def test_a_flag_or_config_secret_leaves_the_rest(text: str, redacted: str) -> None:
    assert redact(text) == redacted


@pytest.mark.parametrize(
    "text, kept",
    [
        ("sshpass -p 'MyS3cret!pw' ssh root@10.0.0.5", "ssh root@10.0.0.5"),
        ("curl -u admin:Adm1nPass99 https://api.internal/v1", "curl -u admin:"),
        ("DB_PASSWORD=s3cr3tPass\nDB_USER=app", "DB_USER=app"),
        ("the passphrase is purple monkey dishwasher", "the passphrase is "),
    ],
)
def test_the_surrounding_text_stays(text: str, kept: str) -> None:
    assert kept in redact(text)


def test_hermes_redactor_is_consulted_when_installed() -> None:
    pytest.importorskip("agent.redact")
    text = "the perplexity key pplx-Ab12Cd34Ef56Gh78Ij90 works"
    assert "pplx-Ab12Cd34Ef56Gh78Ij90" not in redact(text)


def test_an_exclamation_mark_goes_with_the_password() -> None:
    # it ends passwords as often as sentences; left behind, it would give away a password's last character
    assert redact("password is velvet_static_99! dont lose it") == (
        "password is [REDACTED:password] dont lose it"
    )


@pytest.mark.parametrize(
    "sentence, kept",
    [
        ("my bank pin is [REDACTED:password] lol dont tell anyone", ""),
        ("wifi pw is [REDACTED:password] btw for the new router setup", ""),
        (
            "switched my endocrinologist to Haukeland, my patient number there is [REDACTED:national_id]",
            "switched my endocrinologist to Haukeland",
        ),
        ("I moved to Leeds and my new pin is [REDACTED:password]", "I moved to Leeds"),
        # what points back at the secret goes with it; a clause's opening "and" is no part of what is kept
        (
            "mamá's health card number is [REDACTED:national_id], I always have to look it up",
            "",
        ),
        (
            "my pin is [REDACTED:secret], and I moved to Leeds last month",
            "I moved to Leeds last month",
        ),
        (
            "I moved to Leeds, and I love it.",
            "I moved to Leeds, and I love it.",
        ),  # nothing redacted
    ],
)
def test_a_secret_takes_its_clause_with_it(sentence: str, kept: str) -> None:
    assert without_secrets(sentence) == kept


def test_a_sentence_that_only_held_a_secret_is_no_memory() -> None:
    told = redact(
        "My OHIP number is 4826-119-774-KM, they keep asking me for it, please remember it"
    )
    assert extract_candidates(told, "") == []
    told = redact(
        "switched my endocrinologist to Haukeland, my patient number there is 04118822107"
    )
    assert [c.content for c in extract_candidates(told, "")] == [
        "I switched my endocrinologist to Haukeland"
    ]
