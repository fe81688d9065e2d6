"""Test-suite root: its presence puts tests/ on sys.path, so test modules in every folder can
import the shared simulated designs of :mod:`sim_frames`."""
