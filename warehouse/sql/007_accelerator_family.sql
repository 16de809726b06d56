-- Canonical accelerator vendor and family (reference/accelerators.tsv); null where the name is unknown.
alter table efficiency add column if not exists accelerator_vendor varchar;
alter table efficiency add column if not exists accelerator_family varchar;
