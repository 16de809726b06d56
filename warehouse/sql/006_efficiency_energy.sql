-- Energy in the analysis, where power was measured (v4.0 on); null elsewhere.
alter table efficiency add column if not exists energy_kj double;                  -- energy to train, kJ
alter table efficiency add column if not exists average_kw double;                 -- energy / time to train
alter table efficiency add column if not exists energy_kj_per_accelerator double;
alter table efficiency add column if not exists is_pareto_energy boolean;          -- not beaten on both time and energy
