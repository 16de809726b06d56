-- Per score, where its files are: the system's folder for the benchmark in the results repository, at the commit the
-- loaded copy was taken from (the git source's, or MANIFEST.tsv's for a mirror archive), beside the official figures
-- a citation needs: the result ID MLCommons published where one was found that names the system, and the system's row
-- in the official summarizer's spreadsheet (docs/data.md, "Citing a result").
create or replace view score_files as
with latest_ingestion as (
    select round, source, source_kind, source_commit
    from ingestions
    where status = 'succeeded'
    qualify row_number() over (partition by round order by finished_at desc) = 1
)
select
    s.round, s.suite, s.scaling_mode, s.result_id, s.summarizer_row_id, s.submitter, s.system, s.benchmark, s.benchmark_canonical, s.division, s.availability, s.system_name,
    s.accelerators, s.time_to_train_min, s.status, s.rcp_status, s.scaling_factor, i.source_commit,
    case when i.source_commit is not null then
        (case when i.source_kind = 'git_url' and i.source like 'https://github.com/%'
              then regexp_replace(i.source, '(\.git)?/*$', '')
              -- an HPC round hpc-vX.Y is the repository hpc_results_vX.Y
              else 'https://github.com/mlcommons/' || s.suite || '_results_' || replace(s.round, 'hpc-', '') end)
        || '/tree/' || i.source_commit || '/' || s.submitter || '/results/' || s.system || '/'
        -- HPC from v1.0 puts the scaling mode between system and benchmark; v0.7 (strong only) does not
        || case when s.suite = 'hpc' and s.round <> 'hpc-v0.7' then s.scaling_mode || '/' else '' end || s.benchmark
    end as files_url
from scores s
left join latest_ingestion i using (round)
order by s.round, s.benchmark, s.submitter, s.system, s.scaling_mode;

comment on view score_files is 'Per score, its published result ID (where found), its summarizer row and the link to its files (the system''s benchmark folder in the results repository at the loaded commit), with the official time, status and RCP status.';
