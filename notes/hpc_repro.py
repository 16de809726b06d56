"""Throwaway: reproduce the official HPC v2.0 / v3.0 scores two ways and compare with ../shared/mlperf/official.

(a) mlperf_logging 4.1.68 summarize_results() per submitter package (on a scratch copy: the RCP step may write scaling.json)
(b) a from-scratch re-implementation: per-file official compliance (mlp_compliance) + run_start/run_stop,
    strong = olympic mean (drop 1 fastest, 1 slowest; an invalid run counts as an already-dropped slowest) x scaling.json,
    weak = (max run_stop - min run_start)/60000 over compliant logs, number_of_models = count, instance_scale from the log.
"""
import csv, glob, io, json, os, shutil, sys, contextlib
sys.path.insert(0, '/tmp/hpcvenv/lib/python3.11/site-packages')
from mlperf_logging.result_summarizer import result_summarizer as rs
from mlperf_logging.compliance_checker import mlp_compliance
from mlperf_logging.compliance_checker.mlp_parser import parse_file
from mlperf_logging.benchmark_meta import get_result_file_counts

OFF = '/work/shared/mlperf/official'
SCRATCH = '/tmp/hpc_repro/scratch'

def official(round_, mode):
    rows = {}
    for r in csv.DictReader(open(f'{OFF}/official_hpc_{mode}_{round_}.csv')):
        stem = r['details_url'].rsplit('/systems/', 1)[1][:-5]
        rows[stem] = r
    return rows

def run_file(path, ruleset):
    """(valid, start_ms, stop_ms, loglines) as the summarizer's _read_result_file + _query_run_start_stop see them."""
    checker = mlp_compliance.make_checker('hpc', ruleset, True, False)
    with contextlib.redirect_stderr(io.StringIO()):
        valid, *_ = mlp_compliance.main(path, f'hpc_{ruleset}/common.yaml', checker)
    mlp_compliance.enqueued_configs.clear()
    lines, failed = parse_file(path, ruleset=ruleset)
    if not valid or failed:
        return False, None, None, lines
    start = stop = None
    for ll in lines:
        if ll.key == 'run_start' and start is None: start = ll.timestamp
        if ll.key == 'run_stop' and stop is None: stop = ll.timestamp
    return (start is not None and stop is not None), start, stop, lines

def own_strong(folder, ruleset):
    times, invalid = [], 0
    for f in glob.glob(folder + '/result_*.txt'):
        ok, a, b, _ = run_file(f, ruleset)
        if ok: times.append((b - a) / 60 / 1000)
        else: invalid += 1
    if invalid > 1: return None, len(times), invalid
    times.sort()
    kept = times[1:len(times) - (1 - invalid)]
    sf = 1.0
    if os.path.exists(folder + '/scaling.json'): sf = json.load(open(folder + '/scaling.json'))['scaling_factor']
    return (sum(kept) * 1.0 / len(kept)) * sf if kept else None, len(times), invalid

def own_weak(folder, ruleset, bench):
    starts, stops, scale, n, bad = [], [], None, 0, []
    for f in glob.glob(folder + '/result_*.txt'):
        ok, a, b, lines = run_file(f, ruleset)
        if not ok: bad.append(os.path.basename(f)); continue
        starts.append(a); stops.append(b); n += 1
        nodes = next(l.value['value'] for l in lines if l.key == 'number_of_nodes')
        apn = next(l.value['value'] for l in lines if l.key == 'accelerators_per_node')
        s = int(nodes) * max(int(apn), 1)
        assert scale in (None, s); scale = s
    if n < get_result_file_counts('hpc')[bench]: return None, bad
    return (float(n), float(scale), (max(stops) - min(starts)) / 60 / 1000), bad

def main():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    total = exact = 0
    for round_, ruleset in (('v2.0', '2.0.0'), ('v3.0', '3.0.0')):
        src = f'/tmp/hpc_data/hpc_results_{round_}'
        dst = f'{SCRATCH}/hpc_results_{round_}'
        shutil.copytree(src, dst)
        off_s, off_w = official(round_, 'strong'), official(round_, 'weak')
        for pkg in sorted(os.listdir(dst)):
            if not os.path.isdir(f'{dst}/{pkg}/systems') and not os.path.isdir(f'{dst}/{pkg}/results'):
                # Fujitsu+RIKEN etc. are normal; nothing else expected
                pass
            with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
                strong, weak, _, _ = rs.summarize_results(f'{dst}/{pkg}', 'hpc', ruleset)
            for df, offrows, mode in ((strong, off_s, 'strong'), (weak, off_w, 'weak')):
                if len(df) == 0: continue
                for _, row in df.iterrows():
                    stem = row['details_url'].rsplit('/systems/', 1)[1][:-5]
                    o = offrows.get(stem)
                    for col in df.columns:
                        if ':' not in col and col not in ('cosmoflow', 'deepcam', 'oc20', 'openfold'): continue
                        v = row[col]
                        if v is None or (isinstance(v, float) and v != v): continue
                        total += 1
                        ov = float(o[col]) if o is not None and o[col] != '' else None
                        # own implementation, from the raw archive (not the scratch copy)
                        bench = col.split(':')[0]
                        sysfolder = f'{src}/{pkg}/results/{stem}/{mode}/{bench}'
                        if mode == 'strong':
                            mine, nv, ninv = own_strong(sysfolder, ruleset)
                            note = f'valid={nv} invalid={ninv}'
                        else:
                            w, bad = own_weak(sysfolder, ruleset, bench)
                            mine = None if w is None else dict(zip(('number_of_models', 'instance_scale', 'time_to_train_all'), w))[col.split(':')[1]]
                            note = f'dropped={len(bad)}'
                        same = ov is not None and float(v) == ov and mine == ov
                        exact += same
                        print(f'{round_} {mode:6} {pkg}/{stem} {col}: summarizer={float(v)!r} own={mine!r} official={ov!r} '
                              f'{"EXACT" if same else "DIFF"} ({note})')
        # rows in the official CSVs never produced
    print(f'{exact}/{total} values identical (==) in summarizer, own re-implementation and official CSV')

main()
