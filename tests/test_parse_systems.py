"""Lenient reading of systems JSON, on shapes found in the published rounds."""

import json

import pytest

from mlperf_scaling.tasks.parse.systems_json import SystemsJsonError, parse_count, parse_system


def as_bytes(document) -> bytes:
    return json.dumps(document).encode()


def test_counts_arrive_as_strings_floats_and_ints():
    assert parse_count("1452") == 1452
    assert parse_count(1.0) == 1
    assert parse_count(8) == 8
    assert parse_count("N/A") is None
    with pytest.raises(ValueError):
        parse_count("4 + 2")


def test_current_schema_accelerators_are_per_node_times_nodes():
    record = parse_system(as_bytes({"submitter": "NVIDIA", "division": "closed", "status": "Available on-premise",
                                    "number_of_nodes": "64", "accelerators_per_node": "8",
                                    "accelerator_model_name": "NVIDIA H100-SXM5-80GB", "system_name": "Eos"}))
    assert record.accelerators == 512
    assert record.availability == "available on-premise"


def test_trailing_commas_and_typo_keys():
    text = b'{"divison": "Closed", "sumitter": "Alibaba", "number of nodes": "32", "accelerators_per_node": "8",}'
    record = parse_system(text)
    assert record.division == "closed" and record.submitter_declared == "Alibaba" and record.accelerators == 256
    assert "trailing commas" in record.notes


def test_v05_old_schema_uses_nodes():
    record = parse_system(as_bytes({"division": "closed", "status": "on-premise", "nodes": [
        {"num_nodes": 1, "cpu": "Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz", "accelerator": "NA", "num_accelerators": 0}]}))
    assert record.accelerators == 0 and record.accelerator_model_name is None


def test_v06_nvidia_key_json_lines():
    text = (
        b'org: {"value": "NVIDIA", "metadata": {"file": "mlperf_log_utils.py", "lineno": 231}}\n'
        b'division: {"value": "closed", "metadata": {"file": "mlperf_log_utils.py", "lineno": 235}}\n'
        b'status: {"value": "onprem", "metadata": {"file": "mlperf_log_utils.py", "lineno": 239}}\n'
        b'platform: {"value": "130xDGX-1 with V100", "metadata": {"file": "mlperf_log_utils.py", "lineno": 243}}\n'
        b'entry: {"value": "{\'nodes\': \\"{\'accelerator\': \'Tesla V100-SXM2-16GB\', \'num_accelerators\': \'8\', \'num_nodes\': \'130\'}\\", \'framework\': \'MXNet NVIDIA Release 19.05\'}", "metadata": {}}\n'
    )
    record = parse_system(text)
    assert record.accelerators == 1040
    assert record.accelerator_model_name == "Tesla V100-SXM2-16GB"
    assert record.submitter_declared == "NVIDIA"


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"", "empty"),
        (b"this is not json", "is not JSON"),
        (b"[1, 2]", "not an object"),
        (b'{"number_of_nodes": "-2", "accelerators_per_node": "8"}', "negative"),
        (b'{"number_of_nodes": "two", "accelerators_per_node": "8"}', "unusable node or accelerator count"),
        (b'{"number_of_nodes": %d, "accelerators_per_node": 8}' % 2**80, r"out of range \(0 to 1,000,000\): 1.21e\+24"),
        (b'{"number_of_nodes": "1e18", "accelerators_per_node": "1e3"}', r"out of range \(0 to 1,000,000\): '1e18'"),
        (b'{"number_of_nodes": 1000, "accelerators_per_node": 2000}', "1,000 nodes x 2,000 accelerators is beyond 1,000,000"),
        (b'{"number_of_nodes": ' + b"9" * 5000 + b', "accelerators_per_node": 8}', "holds a value that cannot be read: Exceeds the limit"),
        (b'{"number_of_nodes": ' + b"9" * 4000 + b', "accelerators_per_node": 8}', "an integer of over 300 digits"),
        (b'{"number_of_nodes": Infinity, "accelerators_per_node": 8}', "not a whole number: inf"),
        (b'{"nodes": [{"num_nodes": "1e30", "num_accelerators": 8}]}', r"out of range \(0 to 1,000,000\): '1e30'"),
    ],
)
def test_unusable_files_are_refused_with_a_reason(data, reason):
    with pytest.raises(SystemsJsonError, match=reason):
        parse_system(data)
