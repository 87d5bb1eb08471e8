"""Benchmarks (``make bench``): ratios against floors measured in the same run, never timed tests."""
