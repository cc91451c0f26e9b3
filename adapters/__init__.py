"""Chat platform adapters (Slack, Teams, web playground): platform events in, rendered AnswerEvents out."""
