-- Derived scaling metrics per (round, benchmark, system); not official MLPerf results.
create table if not exists efficiency (
    round                            varchar not null,
    benchmark                        varchar not null,
    benchmark_canonical              varchar not null,
    submitter                        varchar not null,
    system                           varchar not null,
    system_name                      varchar,
    availability                     varchar,
    accelerator_model_name           varchar,
    accelerator_vendor               varchar,
    accelerator_family               varchar,
    accelerator_form_factor          varchar,
    accelerator_group                varchar not null,
    accelerator_family_inferred      boolean,
    accelerators                     bigint not null,
    number_of_nodes                  bigint,
    time_to_train_min                double not null,
    time_to_train_min_low            double,
    time_to_train_min_high           double,
    accelerator_hours                double not null,
    is_complete                      boolean not null,
    global_batch_size                double,
    samples_to_converge              double,
    epochs_to_converge               double,
    reference_system                 varchar not null,
    reference_accelerators           bigint not null,
    reference_time_min               double not null,
    is_reference                     boolean not null,
    speedup                          double not null,
    efficiency                       double not null,
    convergence_unit                 varchar,
    training_per_accelerator_minute  double,
    throughput_part                  double,
    convergence_part                 double,
    efficiency_note                  varchar,
    parts_note                       varchar,
    paper_reference_system           varchar not null,
    paper_reference_accelerators     bigint not null,
    paper_reference_time_min         double not null,
    is_paper_reference               boolean not null,
    paper_speedup                    double not null,
    paper_ideal_speedup              double not null,
    paper_e_prime                    double not null,
    is_pareto                        boolean not null,
    energy_kj                        double,
    average_kw                       double,
    energy_kj_per_accelerator        double,
    is_pareto_energy                 boolean,
    primary key (round, benchmark, submitter, system)
);

comment on table efficiency is 'Derived scaling metrics per (round, benchmark, system); not official MLPerf results.';
comment on column efficiency.round is 'MLPerf round, e.g. v4.1';
comment on column efficiency.benchmark is 'benchmark folder name';
comment on column efficiency.benchmark_canonical is 'the same workload across rounds: ssd is ssd_resnet34 to v1.1 and retinanet from v2.0, mask is maskrcnn, gnn is rgat';
comment on column efficiency.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column efficiency.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column efficiency.system_name is 'system_name from the systems JSON';
comment on column efficiency.availability is 'normalised status: available on-premise, available cloud, available, preview, research';
comment on column efficiency.accelerator_model_name is 'as published';
comment on column efficiency.accelerator_vendor is 'from accelerators.tsv (or the name patterns)';
comment on column efficiency.accelerator_family is 'accelerator model: H100, A100, TPU v5p (accelerators.tsv or the name patterns)';
comment on column efficiency.accelerator_form_factor is 'SXM, PCIe (PCIe and NVL cards), board, module, superchip';
comment on column efficiency.accelerator_group is 'comparable hardware: one model and form factor (H100-SXM, A100-PCIe); scaling is measured within it';
comment on column efficiency.accelerator_family_inferred is 'true: a name not in accelerators.tsv, its family read from accelerator_patterns.tsv';
comment on column efficiency.accelerators is 'N';
comment on column efficiency.number_of_nodes is 'number_of_nodes from the systems JSON';
comment on column efficiency.time_to_train_min is 'T: the official (scaled) score';
comment on column efficiency.time_to_train_min_low is 'fastest valid run, scaled: the run-to-run spread, low end';
comment on column efficiency.time_to_train_min_high is 'slowest valid run, scaled: the run-to-run spread, high end';
comment on column efficiency.accelerator_hours is 'T x N / 60';
comment on column efficiency.is_complete is 'false: scored from fewer logs than required';
comment on column efficiency.global_batch_size is 'the global batch size the system trained with';
comment on column efficiency.samples_to_converge is 'training samples to reach the quality target (olympic mean over valid runs)';
comment on column efficiency.epochs_to_converge is 'epochs to reach the quality target (olympic mean over valid runs)';
comment on column efficiency.reference_system is 'submitter/system of the group''s reference: the best (shortest T) at its smallest accelerator count';
comment on column efficiency.reference_accelerators is 'N_ref of the group';
comment on column efficiency.reference_time_min is 'T_ref of the group';
comment on column efficiency.is_reference is 'this row is its group''s reference';
comment on column efficiency.speedup is 'T_ref / T within the group';
comment on column efficiency.efficiency is 'E = (T_ref x N_ref) / (T x N) within the group; 1.0 is perfect scaling; the one efficiency of every table, page and sentence (the paper''s E'' is paper_e_prime)';
comment on column efficiency.convergence_unit is 'samples, or epochs where the system or its reference logged no sample counts; null: no convergence data';
comment on column efficiency.training_per_accelerator_minute is 'samples (or epochs) to converge / (T x N): training work done per accelerator-minute';
comment on column efficiency.throughput_part is 'training per accelerator-minute against the group''s reference: what communication and overheads cost; within [0.05, 20] or null (parts_note says why)';
comment on column efficiency.efficiency_note is 'why efficiency is above 1.1 (super-linear), from its two parts: more training per accelerator-minute than the reference, or fewer samples to converge; null otherwise';
comment on column efficiency.convergence_part is 'samples the reference needed / samples this system needed: what larger batches cost; throughput_part x convergence_part = efficiency';
comment on column efficiency.parts_note is 'why the throughput/convergence split is empty: no samples or epochs logged, the two logs count in different units, or a part outside [0.05, 20] (a unit mix-up); null when the split is there';
comment on column efficiency.paper_reference_system is 'paper''s E'': submitter/system with fewest accelerators, then longest T, across every accelerator';
comment on column efficiency.paper_reference_accelerators is 'paper''s E'': N_ref';
comment on column efficiency.paper_reference_time_min is 'paper''s E'': T_ref';
comment on column efficiency.is_paper_reference is 'paper''s E'': this row is the reference system';
comment on column efficiency.paper_speedup is 'paper''s E'': T_ref / T';
comment on column efficiency.paper_ideal_speedup is 'paper''s E'': N / N_ref';
comment on column efficiency.paper_e_prime is 'paper''s E'' (Cortes et al.): paper_speedup / paper_ideal_speedup against one reference across hardware generations; measures hardware as much as scaling';
comment on column efficiency.is_pareto is 'not beaten on both time and accelerator-hours';
comment on column efficiency.energy_kj is 'energy to train, kJ';
comment on column efficiency.average_kw is 'energy / time to train';
comment on column efficiency.energy_kj_per_accelerator is 'energy_kj / N';
comment on column efficiency.is_pareto_energy is 'not beaten on both time and energy';
