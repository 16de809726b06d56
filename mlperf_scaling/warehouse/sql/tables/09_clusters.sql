-- K-means cluster of each system of a (round, benchmark); derived.
create table if not exists clusters (
    round       varchar not null,
    benchmark   varchar not null,
    submitter   varchar not null,
    system      varchar not null,
    cluster     bigint not null,
    k           bigint not null,
    silhouette  double,
    note        varchar,
    primary key (round, benchmark, submitter, system)
);

comment on table clusters is 'K-means cluster of each system of a (round, benchmark); derived.';
comment on column clusters.round is 'MLPerf round, e.g. v4.1';
comment on column clusters.benchmark is 'benchmark folder name';
comment on column clusters.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column clusters.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column clusters.cluster is '0 = the cluster of the smallest systems';
comment on column clusters.k is 'clusters chosen for the benchmark by silhouette over 2..6';
comment on column clusters.silhouette is 'null when there were too few systems to cluster';
comment on column clusters.note is 'why a group was not clustered';
