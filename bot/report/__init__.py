"""The operator report: turn records the service writes, and the report built from them (terminal, JSON, `/admin`)."""
