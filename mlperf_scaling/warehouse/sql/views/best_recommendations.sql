-- Per benchmark and comparable accelerator group, the recommendation of the round that measured it best: the most
-- distinct accelerator counts (what a fit needs), then the most systems, then the newest round. The newest round alone
-- may know two counts where an older one knew eight; `latest_recommendations` keeps the newest.
create or replace view best_recommendations as
with ranked as (
    select *
    from recommendations
    qualify row_number() over (
        partition by benchmark_canonical, accelerator_group
        order by n_distinct_accelerators desc, n_systems desc, round_order desc
    ) = 1
)
select * from ranked
order by benchmark_canonical, accelerator_group;

comment on view best_recommendations is 'Per benchmark and comparable accelerator group, the recommendation of the round that measured it best: the most distinct accelerator counts, then the most systems, then the newest round.';
