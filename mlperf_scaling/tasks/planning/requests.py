"""What both planners share about a request before any planning: the error that refuses it in one line, and how a name
is compared as people type it."""

from __future__ import annotations

import re


class PlanError(ValueError):
    """The request names nothing the warehouse holds, or asks what cannot be planned; the message says why, in one line."""


def normal_name(text: str) -> str:
    """A name as compared: case, spaces, hyphens and underscores ignored (H100-SXM, h100 sxm)."""
    return re.sub(r"[\s_\-]+", "", text).lower()
