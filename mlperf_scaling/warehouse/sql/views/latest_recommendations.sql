-- Per benchmark and comparable accelerator group, the recommendation of the latest round that measured it: the newest
-- software on that hardware.
create or replace view latest_recommendations as
with ranked as (
    select *
    from recommendations
    qualify row_number() over (partition by benchmark_canonical, accelerator_group order by round_order desc) = 1
)
select * from ranked
order by benchmark_canonical, accelerator_group;

comment on view latest_recommendations is 'Per benchmark and comparable accelerator group, the recommendation of the latest round that measured it: the newest software on that hardware.';
