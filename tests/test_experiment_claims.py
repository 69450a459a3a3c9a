"""Every built-in claim is a sentence of its paper: it carries the sentence (`quote`) and
the paper's own number (`paper`), and a claim that only compares with 0 (or a ratio with
1) says that its sentence states only a direction."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from manetfair import experiments


def all_claims() -> Iterator[tuple[experiments.Experiment, dict[str, Any]]]:
    for exp in experiments.load_all():
        for claim in exp.claims:
            yield exp, claim


CLAIMS = list(all_claims())
IDS = [f"{e.id}: {c['what'][:50]}" for e, c in CLAIMS]


def test_there_are_claims_in_every_paper():
    papers = {e.paper for e, _ in CLAIMS}
    assert {
        "validation",
        "000_b13f657ee131074d.txt",
        "001_8445ccddb4c29e0b.txt",
        "002_850f0e2e7132eb6f.txt",
        "004_25423e879d4e7165.txt",
    } <= papers


@pytest.mark.parametrize(("exp", "claim"), CLAIMS, ids=IDS)
def test_every_claim_quotes_its_paper_and_gives_its_number(exp, claim):
    quote = claim.get("quote")
    assert isinstance(quote, str) and len(quote.split()) >= 4, "a claim needs its sentence"
    paper = claim.get("paper")
    assert isinstance(paper, (int, float)) or (isinstance(paper, Mapping) and "model" in paper), (
        "a claim needs the paper's number (or a model)"
    )
    if claim.get("paraphrase"):
        assert exp.paper == "validation" and "source" not in claim, (
            "only validation claims may paraphrase a reference that is not in papers/"
        )


def _compares_with_zero(claim: Mapping[str, Any]) -> bool:
    """greater/less against 0, or a ratio against 1: a comparison that only says which
    way a quantity moves."""
    if claim.get("test") not in ("greater", "less"):
        return False
    paper = claim.get("paper")
    if paper == 0:
        return True
    return paper == 1 and "ratio" in dict(claim.get("measured", {}))


@pytest.mark.parametrize(("exp", "claim"), CLAIMS, ids=IDS)
def test_a_sign_test_needs_a_sentence_that_states_only_a_direction(exp, claim):
    if _compares_with_zero(claim):
        assert claim.get("direction_only") is True, (
            f"{exp.id}: {claim['what']!r} compares with 0 (or a ratio with 1); if its sentence "
            "gives a number or a word the paper quantifies elsewhere, test that instead, "
            "else mark direction_only = true"
        )


def test_a_direction_only_claim_is_a_sign_test():
    for exp, claim in CLAIMS:
        if claim.get("direction_only"):
            assert claim.get("test") in ("greater", "less"), f"{exp.id}: {claim['what']}"


def _normalise(text: str) -> str:
    text = text.replace("\u00a0", " ").replace("$", "").replace("*", "")
    # LaTeX relations and footnote markers of the papers' texts ("Fig. 3,² M-TCP").
    text = text.replace("\\leq", "≤").replace("\\geq", "≥").replace("²", "").replace("¹", "")
    text = re.sub(r"-\s+", "-", text)  # words broken at line ends: "achiev- able"
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ([.,;:)])", r"\1", text)
    return text.replace("achiev-able", "achievable").strip()


@pytest.mark.papers
@pytest.mark.parametrize(("exp", "claim"), CLAIMS, ids=IDS)
def test_quotes_are_verbatim(exp, claim, papers_dir: Path):
    """With the papers' texts at hand (`--papers=DIR`), every quote (not a paraphrase)
    is in its paper."""
    if claim.get("paraphrase"):
        return
    name = claim.get("source", exp.paper)
    text = (papers_dir / name).read_text(encoding="utf-8")
    # A word broken across lines ("hid-\n\nden") reads with or without its hyphen.
    joined = re.sub(r"(\w)-\n\s*(\w)", r"\1\2", text)
    quote = _normalise(claim["quote"])
    assert quote in _normalise(text) or quote in _normalise(joined), f"{exp.id}: not in {name}"
