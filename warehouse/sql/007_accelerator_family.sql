-- Canonical accelerator vendor and family (reference/accelerators.tsv); null where the name is unknown.
alter table efficiency add column if not exists accelerator_vendor varchar;
alter table efficiency add column if not exists accelerator_family varchar;
-- true: a name not in accelerators.tsv, family read from accelerator_patterns.tsv
alter table efficiency add column if not exists accelerator_family_inferred boolean;
