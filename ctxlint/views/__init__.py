"""Triage views over a checked log: the send record of one session, and the cost picture."""
