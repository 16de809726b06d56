"""Energy to train from power logs, on real lines (DATA_NOTES section 7) and the published v4.0 value."""

import pytest
from conftest import read_shipped_round

from mlperf_scaling.tasks.parse.power_log import parse_power_log, summarize_power
from mlperf_scaling.tasks.score.energy import EnergyError, energy_score, run_energy_j, switch_energy_j
from mlperf_scaling.tasks.score.energy import node_energy_j as _node_energy_j


def node_energy_j(log, time_to_train_ms):
    return _node_energy_j(summarize_power(log), time_to_train_ms)

SMC_NODE = b"""\
:::MLLOG {"namespace":"","time_ms":1715294004458,"event_type":"INTERVAL_START","key":"power_measurement_start","value":"null","metadata":""}
:::MLLOG {"namespace": "", "time_ms": 1715294008538, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 2246, "metadata": ""}
:::MLLOG {"namespace": "", "time_ms": 1715294012538, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 2000, "metadata": ""}
:::MLLOG {"namespace":"","time_ms":1715294004458,"event_type":"INTERVAL_END","key":"power_measurement_stop","value":"null","metadata":""}
"""
DELL_NODE = b"""\
:::MLLOG {"namespace": "", "time_ms": 1728509260000, "event_type": "INTERVAL_START", "key": "power_measurement_start", "value": null, "metadata": {"file": "power_measurement.py", "lineno": 174}}
:::MLLOG {"namespace": "", "time_ms": 1728509260000, "event_type": "POINT_IN_TIME", "key": "conversion_eff", "value": 0.96, "metadata": {"file": "power_measurement.py", "lineno": 175, "measurement_type": "AC"}}
:::MLLOG {"namespace": "", "time_ms": 1728509261000, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 3418.0, "metadata": {"file": "power_measurement.py", "lineno": 88, "host": "0"}}
:::MLLOG {"namespace": "", "time_ms": 1728509262000, "event_type": "POINT_IN_TIME", "key": "power_reading", "value": 3400.0, "metadata": {"file": "power_measurement.py", "lineno": 88, "host": "0"}}
:::MLLOG {"namespace": "", "time_ms": 1728509264000, "event_type": "INTERVAL_END", "key": "power_measurement_stop", "value": null, "metadata": {"file": "power_measurement.py", "lineno": 190}}
"""
SMC_SWITCH = b':::MLLOG {"namespace": "", "time_ms": 1652749794206, "event_type": "POINT_IN_TIME", "key": "interconnect_power_est", "value": 16100, "metadata": {"switch_id": "sw_01"}}\n'


def test_a_stop_stamped_at_the_start_means_the_last_reading_ends_the_window():
    log = parse_power_log(SMC_NODE)
    # 2246 W for 4080 ms, then 2000 W for 4000 ms, over an 8080 ms window, scaled to a 60 s run
    expected = (2246 * 4080 + 2000 * 4000) * 60_000 / 8080 / 1000
    assert node_energy_j(log, 60_000) == pytest.approx(expected, rel=1e-15)


def test_conversion_efficiency_and_window():
    log = parse_power_log(DELL_NODE)
    expected = 0.96 * (3418.0 * 1000 + 3400.0 * 1000) * 120_000 / 4000 / 1000
    assert node_energy_j(log, 120_000) == pytest.approx(expected, rel=1e-15)


def test_switch_energy_is_the_estimate_times_the_run():
    assert switch_energy_j(summarize_power(parse_power_log(SMC_SWITCH)), 60_000) == 16100 * 60


def test_a_node_log_without_a_start_gives_no_energy():
    with pytest.raises(EnergyError, match="power_measurement_start missing"):
        node_energy_j(parse_power_log(SMC_NODE.split(b"\n", 1)[1]), 60_000)
    with pytest.raises(EnergyError, match="no node power log"):
        run_energy_j([], [summarize_power(parse_power_log(SMC_SWITCH))], 60_000)


def test_energy_runs_are_dropped_with_their_times():
    # the fastest and the slowest run by time are dropped, whatever their energy
    assert energy_score([3.0, 1.0, 2.0, 5.0, 4.0], [30.0, 999.0, 20.0, -5.0, 40.0], 0, 1) == 30.0


def test_v40_sustainable_metal_cloud_published_energy():
    data, _ = read_shipped_round("v4.0")
    row = data.scores.filter(
        (data.scores["submitter"] == "smc-dc-power") & (data.scores["system"] == "1xSMC-H100-SXM-80GB")
        & (data.scores["benchmark"] == "llama2_70b_lora")
    ).row(0, named=True)
    assert round(row["time_to_train_min"], 3) == 29.101
    assert round(row["energy_j"] / 1000, 2) == 11769.96
    runs = data.energy.filter((data.energy["submitter"] == "smc-dc-power") & (data.energy["system"] == "1xSMC-H100-SXM-80GB")
                              & (data.energy["benchmark"] == "llama2_70b_lora"))
    assert runs.height == 10 and (runs["n_node_logs"] >= 1).all()
    measured = data.scores.filter(data.scores["energy_j"].is_not_null())
    assert measured.height == 24  # every smc-ac-power and smc-dc-power benchmark


def test_odd_power_lines_are_skipped_and_the_rest_still_read():
    odd = b':::MLLOG {"namespace": "", "time_ms": 1715294009000, "event_type": "POINT_IN_TIME", "value": 5}\n'  # no key
    nan = b':::MLLOG {"namespace": "", "time_ms": 1715294010000, "key": "power_reading", "value": NaN, "metadata": ""}\n'
    broken = b':::MLLOG {"namespace": "", "time_ms": 17152940\n'
    lines = SMC_NODE.split(b"\n")
    log = parse_power_log(b"\n".join(lines[:2]) + b"\n" + odd + broken + nan + b"\n".join(lines[2:]))
    assert log.n_unparsed == 3  # the NaN reading too: it would make the whole energy NaN
    assert [key for _, key, _ in log.events].count("power_reading") == 2
