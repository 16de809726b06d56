"""The fields of a systems JSON that explain scaling, typed: scale-up interconnect, scale-out network, memory, cooling,
the scale-up domain and the software stack, each with the reason when it is missing.

The files are free text written by dozens of submitters ("NVLINK Gen4 900 GB/s + NVSWITCH Gen3", "81559 MiB",
"Storage: 2x ConnectX-7 IB NDR 400Gb/s, Compute: 8x ConnectX-7 IB NDR 400Gb/s"), so every reading here is a documented
rule, and what no rule understands is left null with the text quoted in `covariates_missing`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Placeholders submitters left in the files: a value that says nothing.
_PLACEHOLDERS = {"", "n/a", "na", "none", "-", "null", "tbd", "todo", "unknown", "not applicable"}

# Scale-up fabrics, first match wins (a switch mentioned beside NVLink makes it a switched NVLink domain).
_INTERCONNECTS = (
    ("NVLink + NVSwitch", re.compile(r"nv-?switch|nvl\s?\d{2}", re.I)),
    ("NVLink", re.compile(r"nv-?link", re.I)),
    ("Infinity Fabric", re.compile(r"xgmi|infinity\s*fabric", re.I)),
    ("TPU ICI", re.compile(r"\bici\b|inter-?chip", re.I)),
    ("HCCS", re.compile(r"hccs", re.I)),
    ("IPU-Link", re.compile(r"ipu-?link", re.I)),
    ("RoCE", re.compile(r"roce|ethernet|\bgbe\b", re.I)),  # Gaudi's on-chip RDMA ports
    ("PCIe", re.compile(r"pci-?e|pci\s*express", re.I)),
)
# The fabric of a TPU pod slice is its ICI, even where the file leaves the field blank.
_TPU = re.compile(r"tpu", re.I)

_NETWORKS = (
    ("InfiniBand", re.compile(r"infini-?band|\bib\b|\b[nhex]dr\b|quantum", re.I)),
    ("Slingshot", re.compile(r"slingshot", re.I)),
    ("RoCE", re.compile(r"roce", re.I)),
    ("Omni-Path", re.compile(r"omni-?path|\bopa\b", re.I)),
    ("Ethernet", re.compile(r"ethernet|gbe\b|\be810\b|\bgig|broadcom|bluefield|connectx", re.I)),
)
_COMPUTE_PART = re.compile(r"compute\s*:\s*([^,;]+(?:\+[^,;]+)?)", re.I)
_LINKS = re.compile(r"(?:(\d+)\s*x\s*)?[^,;+]*?(\d+(?:\.\d+)?)\s*(G|T)b(?:ps|/s(?:ec)?|it/s)", re.I)

_COOLING = (
    ("immersion", re.compile(r"immersion", re.I)),
    ("liquid-assisted air", re.compile(r"liquid[- ]assisted|l2a|laac|rdhx|rear[- ]door", re.I)),
    ("liquid", re.compile(r"liquid|water|dlc|direct[- ]to[- ]chip|cold\s*plate", re.I)),
    ("air", re.compile(r"\bair\b|air[- ]cool|passive|active|fan", re.I)),
)

_SIZE = re.compile(r"(?:(\d+)\s*x\s*)?(\d+(?:\.\d+)?)\s*(TiB|TB|T|GiB|GB|G|MiB|MB)\b", re.I)
# vendors quote memory in binary units under decimal names ("80 GB" is 80 GiB of HBM): MiB / 1024 gives the number
# on the datasheet
_TO_GB = {"t": 1024.0, "tb": 1024.0, "tib": 1024.0, "g": 1.0, "gb": 1.0, "gib": 1.0, "mb": 1 / 1024, "mib": 1 / 1024}
_BANDWIDTH = re.compile(r"(\d+(?:\.\d+)?)\s*([TG])B\s*/\s*s(?:ec)?")  # bytes: a capital B (Gb/s is bits)
_GRACE_BLACKWELL = re.compile(r"\bGB[23]00\b", re.I)
_NVL_DOMAIN = re.compile(r"nvl\s?(\d{2,3})\b", re.I)
# "CUDA 12.4", "cuda: 12.2", and the JSON object of later rounds, {"cuda_version": "13.0.1.012"}
_CUDA = re.compile(r"cuda(?:[_ ]?version\"?\s*[:=]\s*\"?|\s*(?:toolkit\s*)?[:v]?\s*)v?(\d+\.\d+(?:\.\d+)?)", re.I)


@dataclass
class SystemCovariates:
    description_json: str | None
    accelerator_interconnect: str | None
    interconnect_kind: str | None
    interconnect_gb_s: float | None
    scale_up_domain: int | None
    host_networking: str | None
    network_kind: str | None
    network_gbit_s_per_node: float | None
    accelerator_memory_gb: float | None
    host_memory_gb: float | None
    cooling_raw: str | None
    cooling: str | None
    operating_system: str | None
    software_stack: str | None
    cuda_version: str | None
    covariates_missing: str | None


def _text(document: dict[str, Any], *keys: str) -> tuple[str | None, str | None]:
    """(the value as text, why it is missing) of the first key present."""
    for key in keys:
        if key in document:
            value = document[key]
            if value is None:
                return None, "null in the file"
            text = str(value).strip() if not isinstance(value, (dict, list)) else json.dumps(value)
            if text.lower() in _PLACEHOLDERS:
                return None, "blank in the file" if not text else f"placeholder {text!r} in the file"
            return text, None
    return None, "not in the file"


def _first(rules: tuple[tuple[str, re.Pattern[str]], ...], text: str) -> str | None:
    return next((name for name, pattern in rules if pattern.search(text)), None)


def memory_gb(text: str) -> float | None:
    """'80 GB', '81559 MiB', '2x 24 GB', '24 x 32GB RDIMM', '2.0 TB' -> GB as datasheets quote them; None if no size."""
    match = _SIZE.search(text)
    if match is None:
        bare = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*", text)  # v0.5 sys_mem_size: a bare number of GB
        return float(bare.group(1)) if bare and float(bare.group(1)) > 0 else None
    count = int(match.group(1)) if match.group(1) else 1
    return round(count * float(match.group(2)) * _TO_GB[match.group(3).lower()], 1)


def interconnect_gb_s(text: str) -> float | None:
    """The accelerator-to-accelerator bandwidth stated in GB/s ('NVLINK Gen4 900 GB/s'), or links x Gb/s / 8
    ('24x 100Gb/s Ethernet'); an aggregate over the system ('14.4 TB/s aggregated') is not per accelerator."""
    if re.search(r"aggregat", text, re.I):
        return None
    match = _BANDWIDTH.search(text)
    if match is not None:
        return float(match.group(1)) * (1000.0 if match.group(2).upper() == "T" else 1.0)
    links = _LINKS.search(text)
    if links is not None and links.group(1):
        return int(links.group(1)) * float(links.group(2)) * (1000.0 if links.group(3).upper() == "T" else 1.0) / 8
    return None


def network_gbit_s(text: str) -> float | None:
    """Gb/s per node of the compute network: 'Compute: 8x ConnectX-7 IB NDR 400Gb/s' -> 3200 (a storage or management
    part is left out when the file names the compute part)."""
    part = _COMPUTE_PART.search(text)
    scope = part.group(1) if part else text
    match = _LINKS.search(scope)
    if match is None:
        return None
    count = int(match.group(1)) if match.group(1) else 1
    return count * float(match.group(2)) * (1000.0 if match.group(3).upper() == "T" else 1.0)


def _network_kind(text: str) -> str | None:
    part = _COMPUTE_PART.search(text)
    return _first(_NETWORKS, part.group(1)) if part and _first(_NETWORKS, part.group(1)) else _first(_NETWORKS, text)


def system_covariates(document: dict[str, Any], accelerators_per_node: int | None, accelerators: int | None,
                      accelerator_model: str | None) -> SystemCovariates:
    """The typed covariates of one system description (its keys already repaired by systems_json)."""
    missing: list[str] = []

    def note(field: str, why: str | None) -> None:
        if why is not None:
            missing.append(f"{field}: {why}")

    interconnect, why = _text(document, "accelerator_interconnect")
    kind = None
    if interconnect is not None:
        kind = _first(_INTERCONNECTS, interconnect)
        why = None if kind else f"not understood: {interconnect[:60]!r}"
    if kind is None and accelerator_model and _TPU.search(accelerator_model):
        kind, why = "TPU ICI", None  # a TPU slice's chips are joined by ICI whatever the file says
    note("interconnect_kind", why)
    bandwidth = interconnect_gb_s(interconnect) if interconnect else None
    if interconnect is not None and bandwidth is None:
        note("interconnect_gb_s", "no per-accelerator bandwidth stated")

    names = " ".join(t for t in (_text(document, "system_name")[0], interconnect, _text(document, "hw_notes")[0]) if t)
    domain_match = _NVL_DOMAIN.search(names)
    domain: int | None = None
    if domain_match is not None and accelerators is not None:
        domain = min(int(domain_match.group(1)), accelerators)  # an NVL72 rack's domain, as far as the system reaches
    elif accelerator_model and _GRACE_BLACKWELL.search(accelerator_model) and accelerators is not None:
        domain = min(72, accelerators)  # GB200 and GB300 ship as NVL72 racks: 72 GPUs on one NVLink switch fabric
    elif kind == "TPU ICI":
        domain = accelerators  # the whole slice is one ICI torus
    elif kind in ("PCIe",):
        domain = 1
    elif kind is not None:
        domain = accelerators_per_node  # a node's NVLink, xGMI, HCCS or IPU-Link reaches its own accelerators
    if domain is None:
        note("scale_up_domain", "no scale-up fabric known" if kind is None else "accelerator count unknown")

    networking, why = _text(document, "host_networking", "network_card", "interconnect")  # v0.5: `interconnect` is the network
    network_kind = network_speed = None
    if networking is not None:
        network_kind = _network_kind(networking)
        network_speed = network_gbit_s(networking)
        why = None if network_kind else f"not understood: {networking[:60]!r}"
        if network_speed is None:
            note("network_gbit_s_per_node", "no link speed stated")
    note("network_kind", why)

    accelerator_memory, why = _text(document, "accelerator_memory_capacity")
    accelerator_gb = memory_gb(accelerator_memory) if accelerator_memory else None
    if accelerator_memory is not None and accelerator_gb is None:
        why = f"not a size: {accelerator_memory[:40]!r}"
    note("accelerator_memory_gb", why)
    host_memory, why = _text(document, "host_memory_capacity", "sys_mem_size")
    host_gb = memory_gb(host_memory) if host_memory else None
    if host_memory is not None and host_gb is None:
        why = f"not a size: {host_memory[:40]!r}"
    note("host_memory_gb", why)

    cooling_raw, why = _text(document, "cooling")
    cooling = _first(_COOLING, cooling_raw) if cooling_raw else None
    if cooling_raw is not None and cooling is None:
        why = f"not understood: {cooling_raw[:40]!r}"
    note("cooling", why)

    software, why = _text(document, "other_software_stack", "libraries")
    note("software_stack", why)
    cuda = _CUDA.search(software or "")
    return SystemCovariates(
        description_json=json.dumps(document, ensure_ascii=False, default=str),
        accelerator_interconnect=interconnect,
        interconnect_kind=kind,
        interconnect_gb_s=bandwidth,
        scale_up_domain=domain,
        host_networking=networking,
        network_kind=network_kind,
        network_gbit_s_per_node=network_speed,
        accelerator_memory_gb=accelerator_gb,
        host_memory_gb=host_gb,
        cooling_raw=cooling_raw,
        cooling=cooling,
        operating_system=_text(document, "operating_system", "os")[0],
        software_stack=software,
        cuda_version=cuda.group(1) if cuda else None,
        covariates_missing="; ".join(missing) or None,
    )
