"""Log parsing on real lines from the published rounds (quoted in ../shared/mlperf/DATA_NOTES.md)."""

from mlperf_scaling.tasks.parse.result_log import MLL, MLLOG, MLP, parse_log

START_V41 = ':::MLLOG {"namespace": "", "time_ms": 1727789614054, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "/workspace/gnn/train.py", "lineno": 913}}'
EVAL_V41 = ':::MLLOG {"namespace": "", "time_ms": 1727789677447, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.679746687412262, "metadata": {"file": "/workspace/gnn/train.py", "lineno": 794, "epoch_num": 0.05}}'
STOP_V41 = ':::MLLOG {"namespace": "", "time_ms": 1727790320650, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "/workspace/gnn/train.py", "lineno": 1192, "status": "success", "epoch_num": 0.9}}'
LAMBDA_CORRUPT = ' 0: :::MLLOG {"namespace": "", "time_ms": 1727545378246, "event_type": "INTERVAL_START", "key": "init_start", "value": nullLambdaorkspace/ft-llm/custom_callbacks.py", "lineno": 207}}'


def lines(*parts: str, end: str = "\n") -> bytes:
    return end.join(parts).encode("latin-1") + end.encode()


def test_mllog_run_times_and_status():
    facts = parse_log(lines(START_V41, EVAL_V41, STOP_V41))
    assert facts.log_format == MLLOG
    assert facts.run_start_ms == 1727789614054.0
    assert facts.run_stop_ms == 1727790320650.0
    assert facts.run_stop_status == "success"
    assert facts.quality_events == [("eval_accuracy", 0.679746687412262, {"file": "/workspace/gnn/train.py", "lineno": 794, "epoch_num": 0.05})]
    assert facts.n_parse_errors == 0


def test_rank_prefixes_and_duplicates_do_not_make_more_runs():
    prefixed = [f"{rank:>4}: {START_V41}" for rank in (0, 9, 65, 2241)] + [f"[0] {EVAL_V41}", f"  12: {STOP_V41}", f"2241: {STOP_V41}"]
    facts = parse_log(lines(*prefixed))
    assert facts.n_run_start == 4 and facts.n_run_stop == 2
    assert facts.run_start_ms == 1727789614054.0 and facts.run_stop_ms == 1727790320650.0


def test_marker_glued_to_other_output_and_carriage_returns():
    glued_stop = "&&&& MLPERF METRIC THROUGHPUT=548.4944 samples / s" + STOP_V41
    progress = "step 1/100\rstep 2/100\r" + START_V41
    facts = parse_log(lines(progress, glued_stop, end="\r\n"))
    assert facts.run_start_ms == 1727789614054.0
    assert facts.run_stop_ms == 1727790320650.0


def test_last_marker_on_a_line_wins():
    # two markers on one line: the official parser keeps what follows the last one
    facts = parse_log(lines(START_V41 + STOP_V41))
    assert facts.n_run_start == 0 and facts.n_run_stop == 1


def test_a_corrupt_mllog_line_is_counted_not_fatal():
    facts = parse_log(lines(START_V41, LAMBDA_CORRUPT, STOP_V41))
    assert facts.n_parse_errors == 1
    assert "not JSON" in facts.first_parse_error
    assert facts.run_stop_status == "success"


def test_invalid_utf8_is_read_as_latin1():
    data = lines(START_V41) + b"garbage \xff\xfe\xc3 bytes\n" + lines(STOP_V41)
    facts = parse_log(data)
    assert facts.run_start_ms is not None and facts.run_stop_ms is not None
    assert facts.n_parse_errors == 0


def test_official_start_stop_scan_keeps_latest_start_until_a_stop():
    second_start = START_V41.replace("1727789614054", "1727789700000")
    later_stop = STOP_V41.replace("1727790320650", "1727790999999")
    facts = parse_log(lines(START_V41, second_start, STOP_V41, later_stop))
    assert facts.run_start_ms == 1727789700000.0
    assert facts.run_stop_ms == 1727790320650.0


def test_v07_alibaba_time_s_and_aborted_status():
    alibaba = (
        ':::MLLOG {"metadata": {"file": "common/fit.py", "status": "aborted", "lineno": 990}, "value": null, '
        '"key": "run_stop", "namespace": "", "time_s": 1593422775.122, "event_type": "INTERVAL_END" }'
    )
    start = ':::MLLOG {"namespace": "", "time_s": 1593420000.5, "key": "run_start", "value": null, "metadata": {}}'
    facts = parse_log(lines(start, alibaba))
    assert facts.run_start_ms == 1593420000.5 * 1000
    assert facts.run_stop_status == "aborted"


def test_v06_mll_lines_with_mpi_prefix():
    facts = parse_log(
        lines(
            '[1,0]<stdout>::::MLL 1560849031.334 run_start: {"value": null, "metadata": {"file": "train_imagenet.py", "lineno": 190}}',
            '[1,0]<stdout>::::MLL 1560849284.044 eval_accuracy: {"value": 0.32678, "metadata": {"epoch_num": 4, "file": "common/fit.py", "lineno": 980}}',
            '[1,0]<stdout>::::MLL 1560852530.921 run_stop: {"value": null, "metadata": {"file": "common/fit.py", "lineno": 987, "status": "success"}}',
        )
    )
    assert facts.log_format == MLL
    assert facts.run_stop_status == "success"
    assert facts.run_stop_ms - facts.run_start_ms == 3_499_587.0  # seconds to 3 decimals, held as ms


def test_v05_mlp_lines_success_flag_and_eval_target():
    facts = parse_log(
        lines(
            "INFO:mlperf_compliance::::MLPv0.5.0 resnet 1541670088.967105627 (/workspace/image_classification/mlperf_log_utils.py:49) run_start",
            ":::MLPv0.5.0 resnet 1541670100.0 (/workspace/image_classification/mlperf_log_utils.py:49) eval_target: 0.749",
            ':::MLPv0.5.0 resnet 1541670492.138237715 (/workspace/image_classification/mlperf_log_utils.py:49) eval_accuracy: {"value": 0.7777, "epoch": 3}',
            ":::MLPv0.5.0 resnet 1541674521.869611263 (/workspace/image_classification/mlperf_log_utils.py:49) run_stop",
            end="\r\n",
        )
    )
    assert facts.log_format == MLP
    assert facts.log_benchmark == "resnet"
    assert facts.eval_target == 0.749
    assert facts.run_stop_status is None  # bare run_stop: the eval target decides
    flagged = parse_log(lines(':::MLPv0.5.0 ssd 1544243288.284713745 (ssd_main.py:262) run_stop: {"success": "true"}'))
    assert flagged.run_stop_status == "success"
    failed = parse_log(lines(':::MLPv0.5.0 ncf 1544243288.2 (ncf.py:1) run_stop: {"success": false}'))
    assert failed.run_stop_status == "failure"


def test_file_without_markers():
    assert parse_log(b"just some output\nno markers\n").log_format is None


def test_nan_and_non_ascii_lines_parse_as_json_loads_parses_them():
    # simdjson refuses NaN; the official json.loads accepts it, so the run stays valid
    nan_line = ':::MLLOG {"namespace": "", "time_ms": 1727789650000, "event_type": "POINT_IN_TIME", "key": "train_loss", "value": NaN, "metadata": {"file": "caf\xe9.py"}}'
    facts = parse_log(lines(START_V41, nan_line, STOP_V41))
    assert facts.n_parse_errors == 0 and facts.n_marker_lines == 3
    assert facts.run_stop_ms == 1727790320650.0


def test_event_without_a_key_or_a_time_is_a_parse_error():
    no_key = ':::MLLOG {"namespace": "", "time_ms": 1727789650000, "value": 1}'
    text_time = ':::MLLOG {"namespace": "", "time_ms": "soon", "key": "epoch_start", "value": 1}'
    facts = parse_log(lines(START_V41, no_key, text_time, STOP_V41))
    assert facts.n_parse_errors == 2
    assert facts.first_parse_error.startswith("JSON without a key")
