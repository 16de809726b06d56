-- Every score row with a time to train (one point each in the explorer), with its derived metrics where the analysis
-- compared it, and its configuration and power beside it ($round: one round, or null for every round). Rows the analysis left out keep their reason.
-- The analysis names a round's workload once (v0.6 Google's folder mask as maskrcnn): joined by the canonical name.
select
    s.round, s.benchmark, s.benchmark_canonical, s.submitter, s.system, s.division, s.status,
    coalesce(e.accelerator_group, 'not compared') as accelerator_group,
    -- an MLPerf HPC CPU-only machine (Fugaku, Cori KNL) counts its processors, as efficiency does
    -- (tasks/metrics/efficiency.py processors_where_no_accelerators); Training's CPU-only rows keep 0
    case when s.suite = 'hpc' and s.accelerators = 0 then y.host_processor_model_name else s.accelerator_model_name end as accelerator_model_name,
    case when s.suite = 'hpc' and s.accelerators = 0 then y.host_processors_per_node * y.number_of_nodes else s.accelerators end as accelerators,
    case when s.suite = 'hpc' and s.accelerators = 0 then 'processors' else 'accelerators' end as scale_unit,
    s.time_to_train_min,
    coalesce(e.time_to_train_min_low, s.time_to_train_min_low) as time_to_train_min_low,
    coalesce(e.time_to_train_min_high, s.time_to_train_min_high) as time_to_train_min_high,
    (case when s.suite = 'hpc' and s.accelerators = 0 then y.host_processors_per_node * y.number_of_nodes else s.accelerators end)
        * s.time_to_train_min / 60 as accelerator_hours,
    e.efficiency, e.efficiency_note, e.throughput_part, e.convergence_part, coalesce(e.is_pareto, false) as is_pareto,
    s.energy_j / 3.6e6 as energy_kwh, e.average_kw, s.global_batch_size,
    x.reason as left_out_because,
    -- the precision the run trained at, and where that is known from: an MFU at an assumed precision says so
    c.interconnect_kind, c.scale_up_domain, c.network_kind, c.cooling, c.precision as precision_linear, c.precision_source,
    case when c.tensor_parallelism is not null
         then 'TP' || c.tensor_parallelism || ' PP' || coalesce(c.pipeline_parallelism, 1) || ' CP' || coalesce(c.context_parallelism, 1)
              || ' EP' || coalesce(c.expert_parallelism, 1) end as parallelism,
    -- an MFU whose peak only one unverified source supports says so
    c.mfu, c.peak_single_source, c.peak_w / 1000 as peak_kw, c.j_per_sample, s.rcp_status, s.result_id, s.summarizer_row_id, f.files_url
from scores s
left join systems y on y.round = s.round and y.submitter = s.submitter and y.system = s.system
left join efficiency e on e.round = s.round and e.benchmark_canonical = s.benchmark_canonical and e.submitter = s.submitter and e.system = s.system
left join analysis_exclusions x
    on x.round = s.round and x.benchmark in (s.benchmark, s.benchmark_canonical) and x.submitter = s.submitter and x.system = s.system
left join result_context c
    on c.round = s.round and c.benchmark_canonical = s.benchmark_canonical and c.submitter = s.submitter and c.system = s.system
left join score_files f
    on f.round = s.round and f.benchmark = s.benchmark and f.submitter = s.submitter and f.system = s.system and f.scaling_mode = s.scaling_mode
where s.time_to_train_min is not null and ($round is null or s.round = $round)
order by s.round, s.benchmark_canonical, s.accelerators, s.time_to_train_min, s.submitter, s.system
