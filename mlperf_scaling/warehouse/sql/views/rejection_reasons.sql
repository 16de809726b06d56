-- Rejections grouped by round, stage and reason, with one example path each.
create or replace view rejection_reasons as
with final as (
    select round, stage, reason, count(*) as n, min(path) as example_path
    from rejections
    group by round, stage, reason
)
select * from final
order by round, n desc;

comment on view rejection_reasons is 'Rejections grouped by round, stage and reason, with one example path each.';
