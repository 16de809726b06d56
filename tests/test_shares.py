"""Readers of a round's shares (a Dask worker each, reading the source itself) give the very facts one reader of the
whole source gives: every run, power summary, system, scaling factor and rejection, in the same order."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import archive, fixture_round

from mlperf_scaling.tasks.parse.read import Share, assemble_round, read_round_files, read_share
from mlperf_scaling.tasks.score.compliance import judge_for
from mlperf_scaling.tasks.score.rules import rules_for_round
from mlperf_scaling.tasks.source.mirror_notes import load_copy_notes, notes_folder_for
from mlperf_scaling.tasks.source.resolve import open_source, resolve_source


def facts_of(spec: str, shares: int):
    source = resolve_source(spec)
    notes = load_copy_notes(notes_folder_for(source.location), source.round)
    judge = judge_for(rules_for_round(source.round))
    if shares == 0:
        with open_source(source) as stream:
            return read_round_files(stream, source.round, notes, workers=0, judge=judge)
    found = []
    for k in range(shares):
        with open_source(source) as stream:
            found.append(read_share(stream, source.round, Share(k, shares), workers=0, judge=judge))
    return assemble_round(source.round, found[::-1], notes, 0.0)  # the order they come back in does not matter


def comparable(facts) -> dict:
    return dataclasses.asdict(dataclasses.replace(facts, seconds=0.0))


@pytest.mark.parametrize("round_name", ["v0.5", "v4.1"])
def test_shares_of_a_real_archive_give_the_facts_of_one_reader(round_name):
    whole = facts_of(str(archive(round_name)), 0)
    assert len(whole.runs) > 100 and whole.rejections
    for shares in (1, 3):
        assert comparable(facts_of(str(archive(round_name)), shares)) == comparable(whole)


def test_shares_of_a_folder_give_the_facts_of_one_reader(tmp_path):
    folder = str(fixture_round("v5.1", tmp_path))
    whole = facts_of(folder, 0)
    assert len(whole.runs) == 10
    assert comparable(facts_of(folder, 4)) == comparable(whole)  # more shares than some share has logs for


def test_shares_that_are_not_one_sources_set_are_refused():
    with pytest.raises(ValueError, match="not all of one source's 2 shares"):
        assemble_round("v4.1", [read_share_stub(Share(0, 2)), read_share_stub(Share(0, 2))], None, 0.0)


def read_share_stub(share: Share):
    from mlperf_scaling.tasks.parse.read import ShareFacts

    return ShareFacts(share, [], [], {}, {}, [], [], 0, 0, 0)
