"""LangGraph integrations of ACM: `AcmStore`, a LangGraph `BaseStore` whose items are ACM memories."""

from acm_langgraph.store import TOOL_NAME, AcmStore

__all__ = ["TOOL_NAME", "AcmStore"]
