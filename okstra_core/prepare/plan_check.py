"""Approved-plan and brief validation for prepare: see `okstra_core.plans`.

The checks live one layer down so that the wizard's `approved_plan` step can refuse
a plan that prepare would refuse; this module keeps prepare's import path.
"""

from __future__ import annotations

from ..catalog.frontmatter import parse_front_matter
from ..plans import (
    EXEMPTION_FORM,
    REQUIREMENTS,
    TESTS_FORM,
    ApprovedPlan,
    StageConformance,
    check_approved_plan,
    check_brief,
    check_declaration,
    check_plan_approval,
    check_stage_declarations,
    split_stages,
    task_root_forms,
)

__all__ = [
    "EXEMPTION_FORM",
    "REQUIREMENTS",
    "TESTS_FORM",
    "ApprovedPlan",
    "StageConformance",
    "check_approved_plan",
    "check_brief",
    "check_declaration",
    "check_plan_approval",
    "check_stage_declarations",
    "parse_front_matter",
    "split_stages",
    "task_root_forms",
]
