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
from ctxlint.rules.ctx009_tool_result_as_user_message import ToolResultAsUserMessage
from ctxlint.rules.ctx010_missing_tool_call_id import MissingToolCallId
from ctxlint.rules.ctx011_duplicate_tool_call_id import DuplicateToolCallId
from ctxlint.rules.ctx012_invalid_tool_arguments import InvalidToolArguments
from ctxlint.rules.ctx013_tool_arguments_schema_violation import ToolArgumentsSchemaViolation
from ctxlint.rules.ctx014_undeclared_tool import UndeclaredTool
from ctxlint.rules.ctx015_modified_reasoning_content import ModifiedReasoningContent
from ctxlint.rules.ctx016_dropped_assistant_turn import DroppedAssistantTurn
from ctxlint.rules.ctx017_empty_tool_call_retry import EmptyToolCallRetry
from ctxlint.rules.ctx018_residual_markup import ResidualMarkup
from ctxlint.rules.ctx019_system_message_not_first import SystemMessageNotFirst
from ctxlint.rules.ctx020_oversized_tool_result import OversizedToolResult
from ctxlint.rules.ctx021_truncated_response_reused import TruncatedResponseReused
from ctxlint.rules.ctx022_provider_error import ProviderError
from ctxlint.rules.ctx023_cross_session_leak import CrossSessionLeak
from ctxlint.rules.ctx024_consecutive_assistant_messages import ConsecutiveAssistantMessages
from ctxlint.rules.ctx025_repaired_history import RepairedHistory
from ctxlint.rules.ctx026_tool_call_loop import ToolCallLoop
from ctxlint.rules.ctx027_tool_arguments_as_object import ToolArgumentsAsObject
from ctxlint.rules.ctx028_duplicate_tool_result import DuplicateToolResult
from ctxlint.rules.ctx029_blank_message import BlankMessage
from ctxlint.rules.ctx030_empty_tool_calls import EmptyToolCalls
from ctxlint.rules.ctx031_empty_tools_list import EmptyToolsList
from ctxlint.rules.ctx032_unsupported_content_part import UnsupportedContentPart
from ctxlint.rules.ctx033_reused_tool_call_id import ReusedToolCallId
from ctxlint.rules.ctx034_malformed_tool_call_id import MalformedToolCallId
from ctxlint.rules.ctx035_refused_prefill import RefusedPrefill
from ctxlint.rules.ctx036_refused_role_order import RefusedRoleOrder
from ctxlint.rules.ctx037_refused_setting import RefusedSetting
from ctxlint.rules.ctx038_changed_thinking_prefix import ChangedThinkingPrefix
from ctxlint.rules.ctx039_tool_history_without_tools import ToolHistoryWithoutTools
from ctxlint.rules.ctx040_unstored_reference import UnstoredReference
from ctxlint.rules.ctx041_unpaired_reasoning_item import UnpairedReasoningItem
from ctxlint.rules.ctx042_duplicate_item_id import DuplicateItemId
from ctxlint.rules.ctx043_refused_cache_breakpoints import RefusedCacheBreakpoints
from ctxlint.rules.ctx044_refused_tool_name import RefusedToolName
from ctxlint.rules.ctx045_refused_tool_count import RefusedToolCount
from ctxlint.rules.ctx046_refused_image import RefusedImage
from ctxlint.rules.ctx047_refused_output_limit import RefusedOutputLimit
from ctxlint.rules.ctx048_refused_tool_schema import RefusedToolSchema
from ctxlint.rules.ctx049_refused_split_responses import RefusedSplitResponses
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
        ToolResultAsUserMessage,
        MissingToolCallId,
        DuplicateToolCallId,
        InvalidToolArguments,
        ToolArgumentsSchemaViolation,
        UndeclaredTool,
        ModifiedReasoningContent,
        DroppedAssistantTurn,
        EmptyToolCallRetry,
        ResidualMarkup,
        SystemMessageNotFirst,
        OversizedToolResult,
        TruncatedResponseReused,
        ProviderError,
        CrossSessionLeak,
        ConsecutiveAssistantMessages,
        RepairedHistory,
        ToolCallLoop,
        ToolArgumentsAsObject,
        DuplicateToolResult,
        BlankMessage,
        EmptyToolCalls,
        EmptyToolsList,
        UnsupportedContentPart,
        ReusedToolCallId,
        MalformedToolCallId,
        RefusedPrefill,
        RefusedRoleOrder,
        RefusedSetting,
        ChangedThinkingPrefix,
        ToolHistoryWithoutTools,
        UnstoredReference,
        UnpairedReasoningItem,
        DuplicateItemId,
        RefusedCacheBreakpoints,
        RefusedToolName,
        RefusedToolCount,
        RefusedImage,
        RefusedOutputLimit,
        RefusedToolSchema,
        RefusedSplitResponses,
        InvalidRecord,
    )
}

__all__ = ["RULES", "Finding", "Rule", "Violation"]
