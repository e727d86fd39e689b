"""The rule registry: every rule, by code. Codes are never reused."""

from __future__ import annotations

from ctxlint.rules.base import Finding, Rule, Violation
from ctxlint.rules.ctx001_orphan_tool_result import OrphanToolResult
from ctxlint.rules.ctx002_unanswered_tool_call import UnansweredToolCall
from ctxlint.rules.ctx003_consecutive_user_messages import ConsecutiveUserMessages
from ctxlint.rules.ctx004_dropped_reasoning_content import DroppedReasoningContent
from ctxlint.rules.ctx005_disabled_thinking_flag import DisabledThinkingFlag
from ctxlint.rules.ctx006_context_window_exceeded import ContextWindowExceeded
from ctxlint.rules.ctx007_context_window_near_limit import ContextWindowNearLimit
from ctxlint.rules.ctx008_lost_first_turn_constraint import LostFirstTurnConstraint
from ctxlint.rules.ctx900_invalid_record import InvalidRecord

RULES: dict[str, type[Rule]] = {
    rule.code: rule
    for rule in (
        OrphanToolResult,
        UnansweredToolCall,
        ConsecutiveUserMessages,
        DroppedReasoningContent,
        DisabledThinkingFlag,
        ContextWindowExceeded,
        ContextWindowNearLimit,
        LostFirstTurnConstraint,
        InvalidRecord,
    )
}

__all__ = ["RULES", "Finding", "Rule", "Violation"]
