"""The integrated FaithBench LLM judge pipeline (prompts, client, parsing, runs, leaderboard)."""
