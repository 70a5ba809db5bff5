"""Judge runs and results (the judge-pipeline issue)."""
