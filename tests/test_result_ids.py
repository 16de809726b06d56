"""Result IDs. `result_id`: the ID MLCommons published, where one was found that names the system
(mlperf_scaling/reference/published_result_ids.tsv, each row with its source), held to its row, never guessed, and
untouched by a bad file of another system. `summarizer_row_id`: the row the official summarizer gives the system in its
spreadsheet, held to the summarizer's own spreadsheet of every shipped round it can read
(tests/fixtures/official_result_ids.tsv, made by tools/official_result_ids.py) and to its ordering rules on small rows."""

from __future__ import annotations

import csv
import functools
import json
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import SHARED_MLPERF as SHARED
from conftest import read_shipped_round
from hypothesis import given, settings
from hypothesis import strategies as st

from mlperf_scaling.reference.lookup import NAMING_PAIRINGS, published_result_ids
from mlperf_scaling.tasks.score.result_ids import SECTIONS, SUMMARY_FIELDS, result_ids, summary_row
from mlperf_scaling.tasks.score.rules import rules_for_round, summary_benchmarks

FIXTURES = Path(__file__).parent / "fixtures"
ORACLE = FIXTURES / "official_result_ids.tsv"
SHIPPED = ("v0.5", "v0.6", "v0.7", "v1.0", "v2.1", "v3.1", "v4.0", "v4.1", "v5.1")
NUMBERED_OFFICIALLY = ("v0.7", "v1.0", "v2.1", "v3.1", "v4.0", "v4.1", "v5.1")


@functools.cache
def _table(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _ids_of(round_name: str, column: str = "summarizer_row_id") -> dict[tuple[str, str], str]:
    data, _ = read_shipped_round(round_name)
    pairs = data.scores.select("submitter", "system", column).unique()
    ids: dict[tuple[str, str], str] = {}
    for submitter, system, result_id in pairs.iter_rows():
        assert ids.setdefault((submitter, system), result_id) == result_id, "one ID per system, shared by its benchmarks"
    return ids


def _absent_from_the_copy(round_name: str) -> set[tuple[str, str]]:
    """Systems every log of which this copy lacks (MISSING.txt): their folders are not here for the summarizer to read,
    though they were when the round was published, so they have IDs here and none in its sheets."""
    data, _ = read_shipped_round(round_name)
    runs = data.scores.group_by("submitter", "system").agg(pl.col("n_runs").sum(), pl.col("n_missing").sum())
    return {(submitter, system) for submitter, system, n, missing in runs.iter_rows() if n == 0 and missing > 0}


@pytest.mark.parametrize("round_name", NUMBERED_OFFICIALLY)
def test_every_system_has_the_id_of_the_official_spreadsheet(round_name):
    ours = _ids_of(round_name)
    rows = [r for r in _table(ORACLE) if r["round"] == round_name]
    assert len(rows) > 50
    numbered = sorted((key for key, value in ours.items() if value is not None), key=ours.__getitem__)
    # the same IDs, once the systems whose logs this copy lacks, and whose folders the summarizer therefore did not
    # find, are taken out of the count
    in_sheet = {(folder, r["system"]) for r in rows for folder in r["submitter"].split("|")}
    present = [key for key in numbered if key in in_sheet or key not in _absent_from_the_copy(round_name)]
    prefix = round_name.removeprefix("v")
    counted = {key: f"{prefix}-{i:04}" for i, key in enumerate(present)}
    # a systems file held by several submitter folders (v4.0's smc, smc-ac-power, smc-dc-power) is one ID each there,
    # the sheet not saying which: the set of IDs must agree
    single = {(r["submitter"], r["system"]): r["result_id"] for r in rows if "|" not in r["submitter"]}
    shared: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        if "|" in r["submitter"]:
            shared.setdefault((r["submitter"], r["system"]), set()).add(r["result_id"])
    assert {key: counted.get(key) for key in single} == single
    for (folders, system), expected in shared.items():
        assert {counted.get((folder, system)) for folder in folders.split("|")} == expected
    assert len(counted) == len(rows)
    if not _absent_from_the_copy(round_name) - in_sheet:
        assert {key: ours[key] for key in single} == single


def test_systems_the_summarizer_leaves_out_get_no_id():
    ids = _ids_of("v1.0")
    # PCL's division is spelled "close": the summarizer's sheets are "closed" and "open"
    assert ids[("PCL", "CloudBrainII_256_mindspore_close")] is None
    # 22 v0.6 files are 'key: {json}' lines, which the summarizer cannot decode; 30 v0.5 files are of the old schema
    assert sum(value is None for value in _ids_of("v0.6").values()) == 26 and set(_ids_of("v0.5").values()) == {None}
    # systems of v1.0 whose logs this copy lacks keep their place: NVIDIA's 128-node PyTorch system was published
    assert ids[("NVIDIA", "dgxa100_n128_ngc21.05_pytorch")] == "1.0-0043"


@pytest.mark.parametrize("round_name", SHIPPED)
def test_ids_are_the_rounds_numbers_in_one_run(round_name):
    ids = _ids_of(round_name)
    numbered = sorted(value for value in ids.values() if value is not None)
    prefix = round_name.removeprefix("v")
    assert numbered == [f"{prefix}-{i:04}" for i in range(len(numbered))]
    if round_name not in ("v0.5", "v0.6", "v0.7"):  # the rounds whose files the summarizer reads in full
        assert len(numbered) >= len(ids) - 3


def test_named_systems_of_v51():
    ids = _ids_of("v5.1")
    # closed on-premise first, in the summary's order: submitter as the JSON names it, then the system name
    assert ids[("AMD", "MI325X_EPYC_9575F_pytorch_llama2_70b")] == "5.1-0000"
    assert ids[("NVIDIA", "theia_ngpu512_ngc25.09_nemo")] == "5.1-0042"
    # the cloud section after all 76 on-premise systems
    assert ids[("NVIDIA", "hsg_ngpu1152_ngc25.09_nemo")] == "5.1-0077"
    assert ids[("Verda", "b200_8x8_ngc25.09")] == "5.1-0090"


def _summary_positions(round_name: str) -> dict[tuple[str, str], int]:
    """Each closed system's place, from 0, in the summarizer's summary sort (before the spreadsheet splits it)."""
    data, _ = read_shipped_round(round_name)
    columns = summary_benchmarks(rules_for_round(round_name).ruleset, data.scores["benchmark"])
    times = {(r["submitter"], r["system"], r["benchmark"]): r["time_to_train_min"] for r in data.scores.iter_rows(named=True)}
    scored = {(r["submitter"], r["system"]) for r in data.scores.iter_rows(named=True)}
    rows = [summary_row(r["submitter"], r["system"], r["availability"], r["description_json"], r["notes"],
                        [times.get((r["submitter"], r["system"], b)) for b in columns])
            for r in data.systems.iter_rows(named=True) if (r["submitter"], r["system"]) in scored and r["division"] == "closed"]
    return {(row.submitter, row.system): i for i, row in enumerate(sorted(rows, key=lambda row: row.sort_key))}


NAMING = [p for p in published_result_ids() if p.pairing in NAMING_PAIRINGS and p.round in SHIPPED]


def test_the_published_ids_found_are_sourced_and_paired():
    found = published_result_ids()
    assert len(found) >= 29 and all(p.source.startswith(("https://", "http://", "GitHub file")) for p in found)
    assert {p.round for p in NAMING} == {"v3.1", "v5.1"} and len(NAMING) == 14
    assert len({(p.round, p.result_id) for p in found}) == len(found)  # an ID is found once
    assert len({(p.round, p.submitter, p.system) for p in NAMING}) == len(NAMING)  # a system has one ID


@pytest.mark.parametrize("published", NAMING, ids=[f"{p.round} {p.result_id}" for p in NAMING])
def test_every_published_id_is_held_to_its_row(published):
    data, _ = read_shipped_round(published.round)
    system = data.scores.filter((pl.col("submitter") == published.submitter) & (pl.col("system") == published.system))
    # the system the source names is in the round, with every benchmark the source quotes, and carries the ID on all
    # its scores; no other system of the round carries it
    assert system.height and set(published.benchmarks) <= set(system["benchmark"].to_list()), published
    assert set(system["result_id"].to_list()) == {published.result_id}
    assert data.scores.filter(pl.col("result_id") == published.result_id).select("submitter", "system").unique().height == 1


@pytest.mark.parametrize("round_name", SHIPPED)
def test_no_id_is_guessed(round_name):
    ids = _ids_of(round_name, "result_id")
    named = {(p.submitter, p.system): p.result_id for p in NAMING if p.round == round_name}
    assert {key: value for key, value in ids.items() if value is not None} == named
    # the IDs found by no more than an offset (v1.0's) are kept in the table, not given to a system
    weak = [p for p in published_result_ids() if p.round == round_name and p.pairing == "weak"]
    assert all(ids.get((p.submitter, p.system)) is None for p in weak)


def test_the_published_ids_follow_the_summary_sort_with_the_cloud_first():
    """No published ID found contradicts another: within a round they rise as the summarizer's summary sorts the closed
    systems, with the cloud section first (docs/data.md), and the spreadsheet's number is none of them."""
    for round_name in ("v3.1", "v5.1"):
        places = _summary_positions(round_name)
        data, _ = read_shipped_round(round_name)
        cloud = {(r["submitter"], r["system"]) for r in data.scores.filter(pl.col("availability") == "available cloud").iter_rows(named=True)}
        rows = [p for p in NAMING if p.round == round_name]
        by_order = sorted(rows, key=lambda p: ((p.submitter, p.system) not in cloud, places[(p.submitter, p.system)]))
        assert [p.result_id for p in by_order] == sorted(p.result_id for p in rows), round_name
        spreadsheet = _ids_of(round_name)
        assert all(spreadsheet[(p.submitter, p.system)] != p.result_id for p in rows)
    # the two the issue names: MLCommons lists NVIDIA's 1,152-GPU cloud system as 5.1-0002, the spreadsheet's row 5.1-0077
    v51 = {p.system: p.result_id for p in NAMING if p.round == "v5.1"}
    assert v51["hsg_ngpu1152_ngc25.09_nemo"] == "5.1-0002" and _ids_of("v5.1")[("NVIDIA", "hsg_ngpu1152_ngc25.09_nemo")] == "5.1-0077"


def _rescored_v51(bad: dict[str, bytes]) -> pl.DataFrame:
    """v5.1 read and scored again, with the systems files named in `bad` replaced by the bytes given."""
    from conftest import archive, score_stream

    from mlperf_scaling.tasks.source.mirror_notes import load_copy_notes
    from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

    with open_source(resolve_source(str(archive("v5.1")))) as stream:
        members = stream.members
        stream.members = ((path, (lambda text=bad[path]: text) if path in bad else load, size) for path, load, size in members)
        data = score_stream(stream, "v5.1", load_copy_notes(SHARED, "v5.1"), workers=1)
    return data.scores


def test_a_bad_systems_file_of_one_system_changes_no_other_systems_id():
    """One malformed systems file (a node count written "8 x 8") leaves the summarizer without that system and shifts
    every spreadsheet row after it; the published IDs are the systems' own and do not move."""
    path = "AMD/systems/MI325X_EPYC_9575F_pytorch_llama2_70b.json"
    before = read_shipped_round("v5.1")[0].scores
    document = json.loads(next(r["description_json"] for r in read_shipped_round("v5.1")[0].systems.iter_rows(named=True)
                               if r["submitter"] == "AMD" and r["system"] == "MI325X_EPYC_9575F_pytorch_llama2_70b"))
    document["number_of_nodes"] = "8 x 8"
    after = _rescored_v51({path: json.dumps(document).encode()})
    key = ["submitter", "system", "benchmark"]
    compared = before.select(*key, "result_id", "summarizer_row_id").join(after.select(*key, "result_id", "summarizer_row_id"),
                                                                          on=key, suffix="_after")
    others = compared.filter(pl.col("system") != "MI325X_EPYC_9575F_pytorch_llama2_70b")
    assert others.height == before.height - 1 and others.filter(pl.col("result_id").is_not_null()).height >= 13
    assert others.filter(pl.col("result_id").ne_missing(pl.col("result_id_after"))).height == 0
    # the summarizer's own numbering is what moves: that is why it is not the ID to cite
    assert others.filter(pl.col("summarizer_row_id").ne_missing(pl.col("summarizer_row_id_after"))).height > 100


# --- the ordering rules, on small rows -------------------------------------------------------------------------------

def _row(system: str, division="closed", status="Available on-premise", submitter="Org", name=None, nodes=1, times=()):
    document = {"division": division, "status": status, "submitter": submitter, "system_name": name or system,
                "number_of_nodes": nodes, "accelerators_per_node": 8, "host_processors_per_node": 2,
                "accelerator_model_name": "A", "host_processor_model_name": "H", "framework": "F", "hw_notes": "", "sw_notes": ""}
    availability = {"Available on-premise": "available on-premise", "Available cloud": "available cloud", "available": "available",
                    "Preview": "preview", "RDI": "research", "weird": "weird"}[status]
    document.update(host_processor_core_count=32)
    if division is None:
        del document["division"]
    return summary_row(submitter, system, availability, json.dumps(document), None, times)


def test_sections_come_in_the_summarizers_order_and_one_counter_runs_through_them():
    rows = [_row("o1", division="open"), _row("r1", status="RDI"), _row("p1", status="Preview"), _row("c1", status="Available cloud"),
            _row("a1"), _row("a0", status="available")]
    ids = result_ids("v9.9", rows)
    order = sorted(ids, key=ids.__getitem__)
    # 'available' and 'Available on-premise' share a section, the raw spelling sorting first
    assert [system for _, system in order] == ["a1", "a0", "c1", "p1", "r1", "o1"]
    assert ids[("Org", "a1")] == "9.9-0000" and ids[("Org", "o1")] == "9.9-0005"


def test_the_sort_compares_as_the_summarizer_does():
    # the node count is text there: "16" sorts before "2"; upper case before lower; tpu-v3 is named by its chips
    rows = [_row("n2", name="Same", nodes=2), _row("n16", name="Same", nodes=16), _row("low", submitter="nebius"), _row("up", submitter="Nebius")]
    ids = result_ids("v1.0", rows)
    assert ids[("Org", "n16")] < ids[("Org", "n2")]
    assert ids[("Nebius", "up")] < ids[("Org", "n16")] < ids[("nebius", "low")]
    tpu = summary_row("Google", "tpu", "available cloud", json.dumps({"system_name": "tpu-v3", "accelerators_per_node": 16}), None, ())
    assert tpu.sort_key[3] == "TPUv3.32"
    # a tie on every description field falls to the benchmark times, a missing one last
    fast, slow, none = (_row(system, name="Same", times=(t,)) for system, t in (("z", 1.0), ("y", 2.0), ("x", None)))
    ids = result_ids("v1.0", [none, slow, fast])
    assert sorted(ids, key=ids.__getitem__) == [("Org", "z"), ("Org", "y"), ("Org", "x")]


def test_a_system_the_summarizer_cannot_place_gets_no_id():
    renamed = summary_row("Org", "r", "available", json.dumps({key: "1" for key in SUMMARY_FIELDS}), "key 'sumitter' read as 'submitter'", ())
    undecodable = summary_row("Org", "u", "available", json.dumps({key: "1" for key in SUMMARY_FIELDS}), "trailing commas removed", ())
    assert renamed.left_out == "the systems JSON lacks submitter, which the summarizer reads" and undecodable.left_out
    rows = [_row("a"), _row("b", status="weird"), _row("c", division=None), _row("d", division="Closed"), renamed, undecodable]
    assert result_ids("v0.7", rows) == {("Org", "a"): "0.7-0000"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["closed", "open"]), st.sampled_from(["Available on-premise", "Available cloud", "available", "Preview", "RDI"]),
                          st.sampled_from(["A", "b", "C"]), st.integers(1, 40)), min_size=1, max_size=30, unique=True))
def test_ids_are_contiguous_and_follow_the_sections(rows):
    made = [_row(f"s{i}", division=d, status=s, submitter=sub, nodes=n) for i, (d, s, sub, n) in enumerate(rows)]
    ids = result_ids("v5.1", made)
    assert sorted(ids.values()) == [f"5.1-{i:04}" for i in range(len(made))]
    section = {"Available on-premise": 0, "available": 0, "Available cloud": 1, "Preview": 2, "RDI": 3}
    rank = {(row.submitter, row.system): SECTIONS.index((row.division, ("on-premise", "cloud", "preview", "research")[section[status]]))
            for row, (_, status, _, _) in zip(made, rows, strict=True)}
    by_id = sorted(ids, key=ids.__getitem__)
    assert [rank[key] for key in by_id] == sorted(rank[key] for key in by_id)
    assert all(re.fullmatch(r"5\.1-\d{4}", value) for value in ids.values())
