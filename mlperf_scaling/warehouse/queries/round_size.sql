-- How much of a round the warehouse holds now: what a new version of it is measured against before it replaces it.
select
    (select count(*) from systems where round = $round)::bigint as n_systems,
    (select count(*) from runs where round = $round)::bigint as n_runs,
    (select count(*) from scores where round = $round and (time_to_train_min is not null or number_of_models is not null))::bigint as n_scored
