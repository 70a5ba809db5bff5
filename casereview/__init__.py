"""The test-validity programme: case-review agreement reports, IRT difficulty and equating, the TheoBERT audit."""
