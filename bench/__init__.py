"""Benchmarks: `make bench` (python -m bench [NAME ...]) runs every bench/*_bench.py."""
