-- One line per round: what the warehouse holds, where it came from and how it was judged.
create or replace view round_summary as
with latest_ingestion as (
    select *
    from ingestions
    where status = 'succeeded'
    qualify row_number() over (partition by round order by finished_at desc) = 1
),
score_counts as (
    select
        round,
        count(*) as n_scores,
        count(*) filter (where status != 'not_scored') as n_scored,
        count(*) filter (where status = 'scored_incomplete') as n_scored_incomplete,
        count(*) filter (where status = 'scored_unchecked') as n_scored_unchecked,
        count(*) filter (where status = 'not_scored') as n_not_scored
    from scores
    group by round
),
run_counts as (
    select round, count(*) as n_runs, count(*) filter (where is_valid) as n_valid_runs
    from runs
    group by round
),
system_counts as (
    select round, count(*) as n_systems from systems group by round
),
rejection_counts as (
    select round, count(*) as n_rejections from rejections group by round
),
final as (
    select
        i.round,
        i.round_order,
        i.source,
        coalesce(i.source_commit, i.source_sha256) as source_version,
        i.ruleset,
        i.rules_package,
        i.rules_coverage,
        i.finished_at as loaded_at,
        coalesce(y.n_systems, 0) as n_systems,
        coalesce(r.n_runs, 0) as n_runs,
        coalesce(r.n_valid_runs, 0) as n_valid_runs,
        coalesce(s.n_scores, 0) as n_scores,
        coalesce(s.n_scored, 0) as n_scored,
        coalesce(s.n_scored_incomplete, 0) as n_scored_incomplete,
        coalesce(s.n_scored_unchecked, 0) as n_scored_unchecked,
        coalesce(s.n_not_scored, 0) as n_not_scored,
        coalesce(j.n_rejections, 0) as n_rejections
    from latest_ingestion as i
    left join system_counts as y using (round)
    left join run_counts as r using (round)
    left join score_counts as s using (round)
    left join rejection_counts as j using (round)
)
select * from final
order by round_order;

comment on view round_summary is 'One line per round: source, version, rules, and counts of what the warehouse holds. n_scored counts every score row with a time to train (scored, scored_incomplete, scored_unchecked), as the CLI does.';
