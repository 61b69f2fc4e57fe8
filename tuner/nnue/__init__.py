"""Training of the (768 -> N)x2 -> 1 net on the CPU: data loading, numba kernels, the run."""
