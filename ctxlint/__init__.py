"""ctxlint: lint captured LLM request logs for context-assembly defects."""

__version__ = "0.1.0"
