"""TPU systems counted in chips, the unit the datasheets describe (reference/accelerator_specs.tsv gives peak compute
per chip).

Google names a slice by its accelerator type, `v<generation>-<size>`. For TPU v2, v3, v4 and v5p the size counts
TensorCores, two to a chip ("--accelerator-type=v3-8 for a single v3 TPU ... v3-128 for a v3 slice with 128
TensorCores", https://cloud.google.com/tpu/docs/v3; "Each TPU v4 chip contains two TensorCores",
https://cloud.google.com/tpu/docs/v4; v5p likewise, https://cloud.google.com/tpu/docs/v5p); for v5e and Trillium
(v6e), one TensorCore a chip, the size counts chips ("v$VERSION_NUMBER-$CHIP_COUNT", https://cloud.google.com/tpu/docs/v5e).

So a `tpu-v4-128` is 64 chips and a `cloud-tpu-v5e-4096` 4,096. From v0.6 on, every Google systems file counts chips
this way (`tpu-v3-1024`: 512 accelerators). v0.5's `entry.json` files do not: their `nodes[]` give `num_nodes` hosts
of `num_accelerators` each, where `num_accelerators` is the whole slice's TensorCores (`tpuv2-512`: 64 hosts x 512 =
32,768, for 256 chips). The rule here: where the accelerator's own name (or the system's) states a slice size, the
system has that many chips, and a count in the file that is the slice's cores, or its cores times its hosts, is read
as that many chips, with a note. The evaluation slice v0.5 names beside the training one (`tpuv3-32 + tpuv2-8`) is not
counted: it evaluates, it does not train.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# tpuv3-32, tpu-v3-1024, TPU-v5p-128, cloud-tpu-v5e-4096, cloud-tpu-trillium-1024 (size last); v5litepod-16
_SLICE = re.compile(r"(?:^|[^a-z0-9])(?:tpu[-_ ]?)?(v\d+[a-z]*|trillium|v5litepod)[-_](\d+)(?![0-9])", re.IGNORECASE)
_GENERATION = re.compile(r"(?:^|[^a-z0-9])tpu[-_ ]?(v\d+[a-z]*|trillium)(?![a-z0-9])", re.IGNORECASE)
# TensorCores per chip, by generation: the slice size is in cores for these
_CORES_PER_CHIP = {"v2": 2, "v3": 2, "v4": 2, "v5p": 2, "v5e": 1, "v5litepod": 1, "v6e": 1, "trillium": 1}
_FAMILY = {"v2": "TPU v2", "v3": "TPU v3", "v4": "TPU v4", "v5p": "TPU v5p", "v5e": "TPU v5e", "v5litepod": "TPU v5e",
           "v6e": "TPU Trillium", "trillium": "TPU Trillium"}


@dataclass(frozen=True)
class Slice:
    generation: str  # v3, v5p, trillium
    size: int  # as named: TensorCores or chips, by generation
    chips: int

    @property
    def family(self) -> str:
        return _FAMILY[self.generation]

    @property
    def unit(self) -> str:
        return "TensorCores" if _CORES_PER_CHIP[self.generation] > 1 else "chips"


def tpu_slice(name: str | None) -> Slice | None:
    """The slice a TPU accelerator or system name states, or None where it states no size of a known generation."""
    if not name:
        return None
    found = _SLICE.search(name)
    if found is None:
        return None
    generation, size = found.group(1).lower(), int(found.group(2))
    cores = _CORES_PER_CHIP.get(generation)
    if cores is None or size % cores or size == 0:
        return None
    return Slice(generation, size, size // cores)


def tpu_generation(name: str | None) -> str | None:
    """The family a TPU system name states (`tpu-v4-128` -> TPU v4), for a file whose accelerator says only 'TPU'."""
    if not name:
        return None
    found = _GENERATION.search(name)
    return _FAMILY.get(found.group(1).lower()) if found else None


def counted_in_chips(accelerator: str | None, system_name: str | None, accelerators: int | None,
                     hosts: int | None) -> tuple[int | None, str | None]:
    """The system's accelerators in chips, and a note where the file's count was read otherwise (None: as written)."""
    named = tpu_slice(accelerator) or tpu_slice(system_name)
    if named is None or accelerators is None or accelerators == named.chips:
        return accelerators, None
    if named.unit == "chips":
        return accelerators, None
    as_cores = {named.size: "the slice's TensorCores"}
    if hosts and hosts > 1:
        as_cores[named.size * hosts] = f"{hosts} hosts x the slice's {named.size} TensorCores"
    how = as_cores.get(accelerators)
    if how is None:
        return accelerators, None  # another count: left as written, and the analysis says it contradicts the name
    return named.chips, (f"counted in chips: {accelerator or system_name} names {named.size} TensorCores, {named.chips} chips of "
                         f"{_CORES_PER_CHIP[named.generation]} (Google's naming); the file's {accelerators:,} is {how}")
